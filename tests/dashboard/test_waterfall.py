"""The waterfall layout: nesting, scale, and spans whose parents are missing."""

from __future__ import annotations

from typing import Any

from dashboard.waterfall import MIN_WIDTH_PCT, place_logs, waterfall
from storage.queries.traces import SpanDetail


def span(sid: str, parent: str, start: int, end: int) -> SpanDetail:
    return SpanDetail(sid, parent, f"span {sid}", 1, start, end, 0, "", "svc", "", "custom",
                      {}, {}, [])


def layout(spans: list[SpanDetail]) -> list[tuple[str, int, float, float, bool]]:
    rows, _, _ = waterfall(spans)
    return [(r.span.span_id, r.depth, round(r.offset_pct, 2), round(r.width_pct, 2), r.orphan)
            for r in rows]


def test_children_follow_their_parent_in_start_order_to_scale() -> None:
    spans = [span("c2", "root", 600, 1000), span("root", "", 0, 1000),
             span("c1", "root", 100, 300), span("g1", "c1", 150, 150)]
    assert layout(spans) == [("root", 0, 0.0, 100.0, False), ("c1", 1, 10.0, 20.0, False),
                             ("g1", 2, 15.0, MIN_WIDTH_PCT, False),
                             ("c2", 1, 60.0, 40.0, False)]
    _, start, duration = waterfall(spans)
    assert (start, duration) == (0, 1000)


def test_a_span_whose_parent_never_arrived_is_shown_at_the_top() -> None:
    assert layout([span("late", "gone", 50, 100), span("root", "", 0, 100)]) == [
        ("root", 0, 0.0, 100.0, False), ("late", 0, 50.0, 50.0, True)]


def test_a_parent_cycle_still_shows_every_span_once() -> None:
    rows = layout([span("a", "b", 0, 10), span("b", "a", 5, 10)])
    assert sorted(r[0] for r in rows) == ["a", "b"]


def test_no_spans() -> None:
    assert waterfall([]) == ([], 0, 0)


def log(key: str, time_ns: int, span_id: str = "") -> dict[str, Any]:
    return {"id": key, "time_ns": time_ns, "span_id": span_id, "trace_id": "ab" * 16}


def test_logs_go_on_their_spans_in_time_order_and_the_rest_below() -> None:
    rows, start, duration = waterfall([span("root", "", 1000, 2000),
                                       span("c1", "root", 1200, 1500)])
    on_spans, elsewhere = place_logs(rows, start, duration, [
        log("k3", 1400, "c1"), log("k1", 1100, "root"), log("k2", 1300, "c1"),
        log("k4", 2500, "gone"), log("k5", 500)])
    assert {sid: [(m.log["id"], round(m.offset_pct, 1)) for m in marks]
            for sid, marks in on_spans.items()} == {
        "root": [("k1", 10.0)], "c1": [("k2", 30.0), ("k3", 40.0)]}
    # Outside the trace's extent: clamped to its edges, the offset kept as it is.
    assert [(m.log["id"], m.offset_pct, m.offset_ns) for m in elsewhere] == [
        ("k5", 0.0, -500), ("k4", 100.0, 1500)]
