"""dashboard/trace_parts.py: kinds, colours, problems, events and collapsed subtrees."""

from __future__ import annotations

from typing import Any

from dashboard import trace_parts as tp
from dashboard.waterfall import waterfall
from storage.queries.traces import SpanDetail


def span(sid: str, parent: str, start: int, service: str = "svc", status: int = 0,
         events: list[dict[str, Any]] | None = None) -> SpanDetail:
    return SpanDetail(sid, parent, f"span {sid}", 2, start, start + 10, status, "", service,
                      "", "custom", {}, {"service.name": service, "host": sid}, events or [])


def test_kinds_by_name() -> None:
    assert [tp.kind_name(k) for k in (1, 2, 3, 4, 5, 0, 9)] == [
        "internal", "server", "client", "producer", "consumer", "unspecified", "kind 9"]


def test_a_colour_and_a_resource_per_service_in_order_of_appearance() -> None:
    rows, _, _ = waterfall([span("r", "", 0, "web"), span("a", "r", 1, "db"),
                            span("b", "r", 2, "web")])
    assert tp.service_colours(rows) == {"web": 0, "db": 1}
    assert tp.service_resources(rows) == {"web": {"service.name": "web", "host": "r"},
                                          "db": {"service.name": "db", "host": "a"}}


def test_problems_and_the_event_timeline() -> None:
    exception = {"name": "exception", "time_unix_nano": 150, "attributes": {
        "exception.type": "E", "exception.message": "m", "exception.stacktrace": "a\nb",
        "exception.escaped": True}}
    s = span("s", "", 100, events=[exception, {"name": "start", "time_unix_nano": 120,
                                               "attributes": {"n": 1}},
                                   {"name": "untimed", "time_unix_nano": 0}])
    assert tp.has_problem(s) and tp.has_problem(span("e", "", 0, status=2))
    assert not tp.has_problem(span("fine", "", 0))
    untimed, start, exc = tp.event_lines(s, 100)
    assert (untimed.name, untimed.offset_ns) == ("untimed", None)
    assert (start.offset_ns, start.attributes, start.stacktrace) == (20, {"n": 1}, None)
    assert (exc.offset_ns, exc.exception_type, exc.exception_message, exc.stacktrace,
            exc.attributes) == (50, "E", "m", "a\nb", {"exception.escaped": True})


def test_a_collapsed_span_hides_its_subtree_only() -> None:
    rows, _, _ = waterfall([span("r", "", 0), span("a", "r", 1), span("a1", "a", 2),
                            span("a2", "a1", 3), span("b", "r", 5), span("leaf", "b", 6)])
    assert [r.children for r in rows] == [2, 1, 1, 0, 1, 0]
    assert tp.hidden_spans(rows, {"a"}) == {"a1", "a2"}
    assert tp.hidden_spans(rows, {"r"}) == {"a", "a1", "a2", "b", "leaf"}
    assert tp.hidden_spans(rows, {"a", "b"}) == {"a1", "a2", "leaf"}
    assert tp.hidden_spans(rows, {"leaf", "nothing"}) == set()  # a leaf has nothing to hide
    assert tp.span_ids_arg(" AB, cd,,") == {"ab", "cd"} and tp.span_ids_arg(None) == set()


def test_an_exception_events_stack_trace_is_parsed_and_other_text_is_not() -> None:
    (exception,) = tp.stack_chain('Traceback (most recent call last):\n  File "/srv/a.py", '
                                  'line 3, in charge\n    pay()\nCardDeclined: no funds')
    assert (exception.type, [f.function for run in exception.runs for f in run.frames]) \
        == ("CardDeclined", ["charge"])
    assert tp.stack_chain("a\nb") == [] and tp.stack_chain(None) == []
