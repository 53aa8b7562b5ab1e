"""Exceptions recorded as log records become error records.

OpenTelemetry is moving exceptions off span events onto log records: an event
named `exception`, or what a logging bridge sends for `logger.exception(...)`
(Python's LoggingHandler sets `exception.type`, `exception.message` and
`exception.stacktrace` on the record). A log record that carries `exception.type`
or `exception.message` is also an ErrorEvent, built by the same rule as one from a
span event (processors/exceptions.py): the same fingerprint, linked to the record's
trace and span, the user from `user.id` or `enduser.id`, the service, environment
and release of its resource, `params` holding `service.name` and the record's other
attributes. It keeps the record's time (`log_time_ns`) so that its error can lead
back to it, and gets the occurrence key of the span-event copy, if the SDK sent one
too, so that the store counts the exception once. Runs before `grouping`.
"""

from __future__ import annotations

from model.component import Processor
from model.records import Batch, ErrorEvent, LogRecord
from processors.exceptions import USER_ATTRIBUTES, exception_error

# Either one makes a record an exception (the semantic conventions require one).
MARKERS = frozenset({"exception.type", "exception.message"})
_USERS = frozenset(USER_ATTRIBUTES)
_MARKER_BYTES = tuple(m.encode() for m in MARKERS)


def _may_mark(data: bytes) -> bool:
    """Whether a record's encoded bytes may hold a marker: every key is there as sent."""
    return b"exception." in data and any(m in data for m in _MARKER_BYTES)


def error_from_log(record: LogRecord) -> ErrorEvent | None:
    attributes = record.attributes
    return exception_error(
        attributes, {"service.name": record.service_name}, record.when_ns,
        record.trace_id or None, record.span_id or None, record.service_name,
        record.resource_attributes, {k: v for k, v in attributes.items() if k in _USERS},
        log_time_ns=record.when_ns)


class LogExceptionsProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def process(self, batch: Batch) -> Batch:
        for record in batch.logs:
            # Most records are no exception: a record still unread is passed over when
            # its bytes (made once, for the stored body too) name neither attribute;
            # the others are looked at for these two only.
            if record.otlp is not None and record.untouched and not _may_mark(
                    record.otlp_bytes()):
                continue
            if not record.find_attributes(MARKERS):
                continue
            error = error_from_log(record)
            if error is not None:
                batch.errors.append(error)
        return batch
