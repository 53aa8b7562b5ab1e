"""The log-exceptions processor: log records that carry an exception become error
records, by the span-exception rule, with the occurrence key of the span-event copy.

The records come from the real OpenTelemetry Python SDK (its LoggingHandler on
`logger.exception(...)` and `span.record_exception`), encoded by its OTLP encoders
into the messages Sounding receives."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from model.fingerprint import fingerprint
from model.otlp_values import attributes_of, fill_key_values
from model.records import Batch, ErrorEvent, LogRecord, Span
from processors.exceptions import ExceptionsProcessor, occurrence_key
from processors.grouping import GroupingProcessor
from processors.logexceptions import LogExceptionsProcessor
from receiver.otlp.decode_traces import spans_from_proto
from runtime.plugins import build_processor
from sounding import config

RESOURCE = {"service.name": "shop", "deployment.environment.name": "prod",
            "service.version": "2.4.1"}
TRACE_ID, SPAN_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


class PaymentDeclined(Exception):
    """A type of the application's own: the span event names it with its module."""


def log_records(request: Any) -> list[LogRecord]:
    """Records as the logs door makes them of an ExportLogsServiceRequest."""
    out = []
    for resource_logs in request.resource_logs:
        resource = attributes_of(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            for r in scope_logs.log_records:
                out.append(LogRecord(
                    r.time_unix_nano, r.observed_time_unix_nano, r.severity_number,
                    r.severity_text, r.trace_id.hex(), r.span_id.hex(), r.flags,
                    r.event_name, str(resource.get("service.name", "unknown_service")),
                    scope_logs.scope.name, resource, otlp=r))
    return out


class Sdk:
    """A tracer and a Python logger wired to the SDK's logs pipeline, in memory."""

    def __init__(self) -> None:
        resource = Resource.create(RESOURCE)
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider(resource=resource)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.tracer = self.tracer_provider.get_tracer("shop.checkout")
        self.logs = InMemoryLogRecordExporter()
        self.logger_provider = LoggerProvider(resource=resource)
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))
        with warnings.catch_warnings():  # the SDK's own handler is deprecated, still sent
            warnings.simplefilter("ignore", DeprecationWarning)
            self.handler = LoggingHandler(logger_provider=self.logger_provider)
        self.logger = logging.getLogger("shop.checkout.test")
        self.logger.propagate = False
        self.logger.setLevel(logging.INFO)
        self.logger.addHandler(self.handler)

    def close(self) -> None:
        self.logger.removeHandler(self.handler)
        self.tracer_provider.shutdown()
        self.logger_provider.shutdown()

    def batch(self) -> Batch:
        spans = spans_from_proto(encode_spans(self.spans.get_finished_spans())).spans
        logs = log_records(encode_logs(self.logs.get_finished_logs()))
        return Batch(project_id=1, spans=spans, logs=logs)


@pytest.fixture
def sdk() -> Iterator[Sdk]:
    made = Sdk()
    yield made
    made.close()


def process(batch: Batch) -> Batch:
    return LogExceptionsProcessor("logexceptions").process(
        ExceptionsProcessor("exceptions").process(batch))


def fail(exc: BaseException) -> None:
    raise exc


def test_logger_exception_becomes_an_error_linked_to_its_trace_and_span(sdk: Sdk) -> None:
    with sdk.tracer.start_as_current_span("POST /checkout") as span:
        try:
            fail(KeyError("sku-1234"))
        except KeyError:
            sdk.logger.exception("checkout failed", extra={"user.id": 42, "order": "o-9"})
        context = span.get_span_context()
    sdk.logger.info("a plain record, no exception")
    batch = GroupingProcessor("grouping").process(process(sdk.batch()))
    (error,) = batch.errors
    (record, plain) = batch.logs
    assert (error.trace_id, error.span_id) == (f"{context.trace_id:032x}",
                                               f"{context.span_id:016x}")
    assert (error.exception_class, error.message) == ("KeyError", "sku-1234")
    assert error.backtrace[0] == "Traceback (most recent call last):"
    assert error.backtrace[-1] == "KeyError: 'sku-1234'"
    stacktrace = record.attributes["exception.stacktrace"]
    assert error.fingerprint == fingerprint("KeyError", stacktrace, "sku-1234")
    assert error.ts_us == record.time_ns // 1000 and error.log_time_ns == record.time_ns
    assert error.user_id == "42"
    assert (error.service, error.environment, error.release) == ("shop", "prod", "2.4.1")
    assert error.params is not None and error.params["service.name"] == "shop"
    assert error.params["order"] == "o-9" and error.params["code.function.name"] == "test_" \
        "logger_exception_becomes_an_error_linked_to_its_trace_and_span"
    assert not set(error.params) & {"exception.type", "exception.message",
                                    "exception.stacktrace"}
    assert error.occurrence_key == occurrence_key(error.trace_id, error.span_id, "KeyError",
                                                  "sku-1234")
    assert plain.untouched  # a record without an exception: its attributes stay unread


@pytest.mark.parametrize("exc", [KeyError("sku-1234"), PaymentDeclined("card 4 declined"),
                                 ValueError("  spaced\n  out  ")])
def test_an_exception_sent_as_span_event_and_log_record_has_one_key_and_group(
        sdk: Sdk, exc: Exception) -> None:
    with sdk.tracer.start_as_current_span("POST /checkout") as span:
        try:
            fail(exc)
        except Exception as caught:  # noqa: BLE001 - the test raises it
            span.record_exception(caught)
            sdk.logger.exception("checkout failed")
    from_span, from_log = process(sdk.batch()).errors
    assert from_span.log_time_ns is None and from_log.log_time_ns is not None
    # The two SDK paths name the type and the message differently...
    if isinstance(exc, PaymentDeclined):
        assert from_span.exception_class == f"{__name__}.PaymentDeclined"
        assert from_log.exception_class == "PaymentDeclined"
    # ...and still describe one occurrence.
    assert from_span.occurrence_key is not None
    assert from_span.occurrence_key == from_log.occurrence_key
    assert (from_span.trace_id, from_span.span_id) == (from_log.trace_id, from_log.span_id)
    assert (from_span.service, from_span.environment, from_span.release) == (
        from_log.service, from_log.environment, from_log.release)
    # One group too, whichever copy is stored first.
    assert from_span.fingerprint == from_log.fingerprint


def test_other_exceptions_in_one_span_have_other_keys(sdk: Sdk) -> None:
    with sdk.tracer.start_as_current_span("POST /checkout"):
        for exc in (KeyError("sku-1"), KeyError("sku-2"), IndexError("sku-1")):
            try:
                fail(exc)
            except LookupError:
                sdk.logger.exception("item failed")
    keys = [e.occurrence_key for e in process(sdk.batch()).errors]
    assert len(set(keys)) == 3 and None not in keys


def otlp_record(attributes: dict[str, Any], event_name: str = "", trace_id: str = TRACE_ID,
                span_id: str = SPAN_ID) -> LogRecord:
    message = logs_pb2.LogRecord(time_unix_nano=0, observed_time_unix_nano=5_000_000_000,
                                 severity_number=17, event_name=event_name,
                                 trace_id=bytes.fromhex(trace_id),
                                 span_id=bytes.fromhex(span_id))
    fill_key_values(message.attributes, attributes)
    resource = {"service.name": "api", "deployment.environment": "staging"}
    return LogRecord(0, 5_000_000_000, 17, "", trace_id, span_id, 0, event_name, "api", "s",
                     resource, otlp=message)


def test_an_exception_event_becomes_an_error() -> None:
    record = otlp_record({"exception.type": "java.lang.IllegalStateException",
                          "exception.message": "order 77 is closed", "enduser.id": "u-1"},
                         event_name="exception")
    (error,) = process(Batch(project_id=1, logs=[record])).errors
    assert (error.exception_class, error.message, error.user_id) == (
        "java.lang.IllegalStateException", "order 77 is closed", "u-1")
    # No time on the record: when it was observed. No new environment attribute: the old.
    assert error.ts_us == 5_000_000 and error.log_time_ns == 5_000_000_000
    assert (error.service, error.environment, error.release) == ("api", "staging", None)
    assert error.params == {"service.name": "api", "enduser.id": "u-1"}


@pytest.mark.parametrize("attributes", [
    {},
    {"exception.stacktrace": "only a trace"},  # neither type nor message
    {"exception.type": "", "exception.message": ""},
    {"http.route": "/x", "exception.escaped": True},
])
def test_a_record_without_exception_type_or_message_is_no_error(
        attributes: dict[str, Any]) -> None:
    batch = process(Batch(project_id=1, logs=[otlp_record(attributes, event_name="exception")]))
    assert batch.errors == []


def test_a_record_whose_bytes_name_no_marker_is_left_unread() -> None:
    """Passed over on its encoded bytes, which the stored body then reuses."""
    plain = otlp_record({"http.route": "/x", "exception.escaped": True})
    marked = otlp_record({"exception.message": "disk full"})
    batch = process(Batch(project_id=1, logs=[plain, marked]))
    assert len(batch.errors) == 1
    assert plain.untouched and plain.otlp_bytes() is plain.otlp_bytes()
    assert plain.otlp_bytes() == plain.otlp.SerializeToString()


def test_an_exception_outside_a_trace_has_no_key_and_is_never_merged() -> None:
    record = otlp_record({"exception.message": "disk full"}, trace_id="", span_id="")
    (error,) = process(Batch(project_id=1, logs=[record])).errors
    assert (error.trace_id, error.span_id, error.occurrence_key) == (None, None, None)
    assert error.exception_class == "Error"
    assert occurrence_key(TRACE_ID, "", "E", "m") is None
    assert occurrence_key("", SPAN_ID, "E", "m") is None


def test_log_errors_are_grouped_with_span_errors_of_the_same_fingerprint() -> None:
    trace = 'Traceback (most recent call last):\n  File "/a.py", line 3, in f\nKeyError: 1\n'
    exception = {"exception.type": "KeyError", "exception.message": "'sku-1'",
                 "exception.stacktrace": trace}
    span = Span(TRACE_ID, SPAN_ID, "", "GET /", 2, 1_000, 2_000, 2, "", "api", "s",
                {"service.name": "api"}, attributes={},
                events=[{"name": "exception", "time_unix_nano": 1_500, "attributes": exception}])
    batch = Batch(project_id=1, spans=[span],
                  logs=[otlp_record({**exception, "exception.message": "'sku-2'"})])
    batch = GroupingProcessor("grouping").process(process(batch))
    (group,) = batch.groups.values()
    assert group.count == 2


def test_it_is_a_registered_processor_that_runs_before_grouping() -> None:
    assert isinstance(build_processor("logexceptions", {}), LogExceptionsProcessor)
    order = config.DEFAULTS["service"]["pipeline"]["processors"]
    assert order.index("logexceptions") < order.index("grouping")


def test_an_error_is_an_error_event() -> None:
    (error,) = process(Batch(project_id=1, logs=[otlp_record(
        {"exception.type": "E"})])).errors
    assert isinstance(error, ErrorEvent)
