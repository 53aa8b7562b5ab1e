"""The exceptions processor: `exception` span events become error records, grouped
by the fingerprint rule documented in processors/exceptions.py and docs/errors.md."""

from __future__ import annotations

from typing import Any

from model.fingerprint import fingerprint
from model.records import Batch, Span
from processors.exceptions import ExceptionsProcessor, occurrence_key
from processors.grouping import GroupingProcessor
from runtime.plugins import build_processor
from sounding import config

PYTHON_TRACE = """Traceback (most recent call last):
  File "/srv/app/pricing.py", line 12, in price
    return table[order.sku]
KeyError: 'sku-1234'
"""
NODE_TRACE = """TypeError: Cannot read properties of undefined (reading 'id')
    at loadUser (/app/users.js:10:15)
    at main (/app/index.js:3:1)
"""


def span(events: list[dict[str, Any]], **attributes: Any) -> Span:
    return Span(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7",
                parent_span_id="", name="GET /cart", kind=2, start_ns=1_000_000_000,
                end_ns=3_000_000_000, status_code=2, status_message="", service_name="web",
                scope_name="lib", resource_attributes={"service.name": "web"},
                attributes=attributes, events=events)


def exception_event(attributes: dict[str, Any], time_ns: int = 2_000_000_000
                    ) -> dict[str, Any]:
    return {"name": "exception", "time_unix_nano": time_ns, "attributes": attributes}


def test_exception_events_become_linked_error_records() -> None:
    events = [
        exception_event({"exception.type": "TypeError", "exception.message": "boom 7",
                         "exception.stacktrace": NODE_TRACE, "exception.escaped": True}),
        {"name": "cache miss", "time_unix_nano": 5, "attributes": {"key": "x"}},
        exception_event({"exception.message": "plain text"}, time_ns=0),
        exception_event({"exception.stacktrace": "only a trace"}),  # neither type nor message
    ]
    batch = GroupingProcessor("grouping").process(ExceptionsProcessor("exceptions").process(
        Batch(project_id=1, spans=[span(events, **{"user.id": 99})])))
    first, second = batch.errors
    assert (first.trace_id, first.span_id) == ("4bf92f3577b34da6a3ce929d0e0e4736",
                                               "00f067aa0ba902b7")
    assert (first.exception_class, first.message) == ("TypeError", "boom 7")
    assert first.backtrace == NODE_TRACE.rstrip().splitlines()
    assert first.ts_us == 2_000_000
    assert first.fingerprint == fingerprint("TypeError", NODE_TRACE, "boom 7")
    assert first.params == {"service.name": "web", "span.name": "GET /cart",
                            "exception.escaped": True}
    assert first.user_id == "99"
    # No type: the class reads "Error"; no time: the span's end.
    assert (second.exception_class, second.message, second.backtrace) == ("Error",
                                                                           "plain text", [])
    assert second.ts_us == 3_000_000


def test_errors_from_spans_are_grouped_in_the_same_batch() -> None:
    events = [exception_event({"exception.type": "KeyError", "exception.message": m,
                               "exception.stacktrace": PYTHON_TRACE})
              for m in ("'sku-1'", "'sku-2'", "'sku-3'")]
    batch = Batch(project_id=1, spans=[span(events)])
    batch = GroupingProcessor("grouping").process(ExceptionsProcessor("exceptions").process(batch))
    (group,) = batch.groups.values()
    assert group.count == 3 and group.exception_class == "KeyError"


def test_it_is_a_registered_processor_that_runs_before_grouping() -> None:
    assert isinstance(build_processor("exceptions", {}), ExceptionsProcessor)
    order = config.DEFAULTS["service"]["pipeline"]["processors"]
    assert order.index("exceptions") < order.index("grouping")


def test_span_errors_keep_their_resource_and_get_an_occurrence_key() -> None:
    events = [exception_event({"exception.type": "app.errors.Declined",
                               "exception.message": "'card 4'"})]
    record = span(events)
    record.resource_attributes = {"service.name": "web", "deployment.environment.name": "prod",
                                  "deployment.environment": "old", "service.version": 7}
    (error,) = ExceptionsProcessor("exceptions").process(
        Batch(project_id=1, spans=[record])).errors
    assert (error.service, error.environment, error.release) == ("web", "prod", "7")
    assert error.log_time_ns is None
    # The type without its module, the message without its quotes (as a logging
    # bridge sends them), the ids: one key for both copies of one exception.
    key = occurrence_key(record.trace_id, record.span_id, "Declined", "card 4")
    assert error.occurrence_key == key is not None
    assert occurrence_key(record.trace_id, record.span_id, "Declined", "card  4 ") == key
    for other in (occurrence_key(record.trace_id, "1" * 16, "Declined", "card 4"),
                  occurrence_key("2" * 32, record.span_id, "Declined", "card 4"),
                  occurrence_key(record.trace_id, record.span_id, "Refused", "card 4"),
                  occurrence_key(record.trace_id, record.span_id, "Declined", "card 5")):
        assert other != key
