"""Exceptions recorded on spans become error records.

An OpenTelemetry SDK records an exception as a span event named `exception` with
`exception.type`, `exception.message` and `exception.stacktrace`. Each such event
becomes an ErrorEvent linked to its trace and span, so that it is grouped, counted
and shown like an error sent to /ingest/errors. Runs before `grouping`.

An SDK sends no fingerprint: each error carries what Sounding's rule reads
(`grouping`), and the grouping processor decides its fingerprint.

Each error also gets the service, environment and release of its resource, and,
when it has a trace and a span id, an occurrence key (`occurrence_key`): an SDK may
send one exception twice, as a span event here and as a log record
(processors/logexceptions.py), and the store keeps only the first copy of a key.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from model.component import Processor
from model.fingerprint import Grouping, short_type, unquoted
from model.records import Batch, ErrorEvent, Span

EVENT_NAME = "exception"
DEFAULT_TYPE = "Error"  # a JavaScript recordException("text") sends a message only
USER_ATTRIBUTES = ("user.id", "enduser.id")  # the first one present wins
EXCEPTION_ATTRIBUTES = frozenset(
    {"exception.type", "exception.message", "exception.stacktrace"})
# Resource attributes kept on each error: the first one present wins.
ENVIRONMENT_ATTRIBUTES = ("deployment.environment.name", "deployment.environment")
RELEASE_ATTRIBUTE = "service.version"
KEY_MESSAGE_CHARS = 200
_SPACE = re.compile(r"\s+")


def occurrence_key(trace_id: str | None, span_id: str | None, exception_type: str,
                   message: str) -> str | None:
    """The key one exception has whichever way it was sent, or None without a trace
    and a span id (such errors are never merged): the SHA-256 (first 32 hex
    characters) of the trace id, the span id, the exception type without its module
    or package (the part after the last `.`) and the message with one pair of
    surrounding quotes dropped, whitespace collapsed, cut at 200 characters.

    The two copies of a Python exception differ in exactly these ways: a span event
    names the type `module.Class` and its message is `str(exc)` ('sku-1' for a
    KeyError), the logging bridge names it `Class` and sends `str(exc.args[0])`
    (sku-1). Numbers are kept: the same error logged for items 1 and 2 in one span
    is two occurrences."""
    if not trace_id or not span_id:
        return None
    text = _SPACE.sub(" ", unquoted(message)).strip()[:KEY_MESSAGE_CHARS]
    parts = (trace_id.lower(), span_id.lower(), short_type(exception_type), text)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _first(values: dict[str, Any], names: tuple[str, ...]) -> str | None:
    return next((text(values[n]) for n in names if values.get(n) not in (None, "")), None)


def exception_error(attributes: dict[str, Any], params: dict[str, Any], time_ns: int,
                    trace_id: str | None, span_id: str | None, service: str,
                    resource: dict[str, Any], user_attributes: dict[str, Any],
                    log_time_ns: int | None = None) -> ErrorEvent | None:
    """The error an exception's attributes describe (None when they name neither a
    type nor a message, as the semantic conventions require one of the two); `params`
    gets the attributes other than the exception's."""
    exception_type = text(attributes.get("exception.type"))
    message = text(attributes.get("exception.message"))
    if not exception_type and not message:
        return None
    stacktrace = text(attributes.get("exception.stacktrace"))
    params.update({k: v for k, v in attributes.items() if k not in EXCEPTION_ATTRIBUTES})
    return ErrorEvent(
        fingerprint="",  # decided by the grouping processor, from `grouping`
        exception_class=exception_type or DEFAULT_TYPE,
        message=message,
        backtrace=[line.rstrip() for line in stacktrace.rstrip().splitlines()],
        ts_us=time_ns // 1000,
        user_id=_first(user_attributes, USER_ATTRIBUTES),
        params=params,
        trace_id=trace_id,
        span_id=span_id,
        service=service or None,
        environment=_first(resource, ENVIRONMENT_ATTRIBUTES),
        release=_first(resource, (RELEASE_ATTRIBUTE,)),
        log_time_ns=log_time_ns,
        occurrence_key=occurrence_key(trace_id, span_id, exception_type, message),
        grouping=Grouping(exception_type, message),
    )


def error_from_event(span: Span, event: dict[str, Any]) -> ErrorEvent | None:
    attributes = event.get("attributes") or {}
    if not text(attributes.get("exception.type")) \
            and not text(attributes.get("exception.message")):
        return None  # without reading the span's attributes
    time_ns = int(event.get("time_unix_nano") or 0) or span.end_ns or span.start_ns
    return exception_error(
        attributes, {"service.name": span.service_name, "span.name": span.name}, time_ns,
        span.trace_id, span.span_id, span.service_name, span.resource_attributes,
        span.find_attributes(frozenset(USER_ATTRIBUTES)))


class ExceptionsProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def process(self, batch: Batch) -> Batch:
        for span in batch.spans:
            if not span.has_events():  # without reading the attributes of a span
                continue
            for event in span.events:
                if event.get("name") != EVENT_NAME:
                    continue
                error = error_from_event(span, event)
                if error is not None:
                    batch.errors.append(error)
        return batch
