"""Sentry's logs become log records, stored as an OTLP log record is
(storage/logbody.py). Pure: a parsed JSON object in, records out.

Two item types carry them:

- `log` (content type application/vnd.sentry.items.log+json): what every SDK sends
  (`sentry_sdk.logger.info(...)`, the Python SDK's LoggingIntegration, @sentry/node's
  `Sentry.logger` with `enableLogs`): `{"version": 2, "items": [...]}`, each log with
  `timestamp` (seconds), `level` (trace, debug, info, warn, error, fatal), `body`,
  `trace_id`, `span_id` (@sentry/node leaves it out and sends the
  `sentry.trace.parent_span_id` attribute instead), `severity_number` (@sentry/node;
  the Python SDK sends the `sentry.severity_number` attribute) and typed
  `attributes`, read as streamed spans' are (receiver/sentry/typed_attributes.py).
- `otel_log`: an OTLP/JSON logs request (`{"resourceLogs": [...]}`), read by the OTLP
  door's decoder (receiver/otlp/decode_logs.py), so that it is stored alike.

What a `log` becomes:

- the severity number from `severity_number`, else `sentry.severity_number`, else
  mapped from `level` as OpenTelemetry's data model and Sentry's protocol map them
  (trace 1, debug 5, info 9, warn 13, error 17, fatal 21); the severity text is the
  level as sent (the log page filters by number, whatever the text);
- the time from `timestamp`, and the observed time too: the SDK saw the log when it
  was written (as OpenTelemetry's SDKs set both on emit), and a record with no
  OTLP message is stored and keyed by its columns (storage/logbody.py), so a time of
  arrival would make a retried envelope's logs new records. A log without a time is
  observed when it arrived (`now_us`);
- release, environment and SDK become the resource (service.version,
  deployment.environment.name, telemetry.sdk.*) and the service is read as for a
  streamed span, so that a log and the span it was written in name the same service;
- every other attribute is kept as the record's, the message template
  (`sentry.message.template`) and its parameters (`sentry.message.parameter.<name>`)
  among them: a search by `sentry.message.template=order {order} shipped` finds every
  log written from that line, whatever the order. The severity attributes and
  `sentry.trace.parent_span_id` are not kept twice: they are the record's columns.

Nothing here raises for a field: a log that is not an object or has no body is
dropped alone, counted with its reason in the returned DecodedLogs, the rest kept.
"""

from __future__ import annotations

from typing import Any

from model.errors import InvalidInput
from model.records import LogRecord
from receiver.otlp.decode_logs import MAX_SEVERITY, DecodedLogs, logs_from_json
from receiver.otlp.json_rules import Drop
from receiver.sentry.resource import ON_THE_RESOURCE, Resources, resource_of
from receiver.sentry.span_attributes import (
    SCOPE,
    Attributes,
    attribute_value,
    read_items,
)
from receiver.sentry.typed_attributes import plain_attributes
from receiver.sentry.values import MAX_LABEL, hex_id, text, time_us

# The logs of one `log` item, at most (the SDKs send batches of 100): the rest are
# dropped, counted.
MAX_LOGS = 1000
# Sentry's levels as OpenTelemetry severity numbers (the first of each range).
SEVERITIES = {"trace": 1, "debug": 5, "info": 9, "warn": 13, "warning": 13, "error": 17,
              "fatal": 21}
_SEVERITY_ATTRIBUTES = ("sentry.severity_number", "sentry.severity_text")
_PARENT_SPAN = "sentry.trace.parent_span_id"
_NOT_ON_THE_RECORD = frozenset({*ON_THE_RESOURCE, *_SEVERITY_ATTRIBUTES, _PARENT_SPAN})


def _severity(item: dict[str, Any], sent: dict[str, Any], level: str | None) -> int:
    for number in (item.get("severity_number"), sent.get("sentry.severity_number")):
        if (isinstance(number, int) and not isinstance(number, bool)
                and 0 < number <= MAX_SEVERITY):
            return number
    return SEVERITIES.get(level.lower(), 0) if level else 0


def _log(item: Any, now_ns: int, known: Resources) -> LogRecord:
    if not isinstance(item, dict):
        raise Drop("a log must be an object")
    body = item.get("body")
    if body is None:
        raise Drop("body must be set")
    if not isinstance(body, str):
        body = attribute_value(body)  # a number as it is, an object as its JSON
    sent = plain_attributes(item.get("attributes"))
    level = text(item.get("level"), MAX_LABEL)
    ts_us = time_us(item.get("timestamp"))
    attributes = Attributes()
    attributes.put_all({k: v for k, v in sent.items() if k not in _NOT_ON_THE_RECORD})
    span_id = hex_id(item.get("span_id"), 16) or hex_id(sent.get(_PARENT_SPAN), 16) or ""
    resource = resource_of(sent, known)
    time_ns = 0 if ts_us is None else ts_us * 1000
    return LogRecord(
        time_ns, time_ns or now_ns, _severity(item, sent, level),
        level or "", hex_id(item.get("trace_id"), 32) or "", span_id, 0, "",
        str(resource["service.name"]), SCOPE, resource, attributes.values, body)


def decode_log_items(payload: Any, now_us: int) -> DecodedLogs:
    """The logs of one `log` item, in the order sent; those that could not be kept
    are counted in `dropped` with their reasons (`items[i]: ...`)."""
    out = DecodedLogs()
    now_ns = now_us * 1000
    read_items(payload, "log", out, lambda item, known: _log(item, now_ns, known), out.logs,
               MAX_LOGS)
    return out


def decode_otel_log(payload: Any, now_us: int) -> DecodedLogs:
    """The log records of one `otel_log` item: an OTLP/JSON logs request. One that is
    not OTLP at all is one dropped record with its reason, not a refused envelope."""
    try:
        return logs_from_json(payload, now_us * 1000)
    except InvalidInput as exc:
        out = DecodedLogs()
        problem = exc.details[0] if exc.details else {"field": "", "error": exc.message}
        out.drop("otel_log", f"{problem['field']}: {problem['error']}".lstrip(": "))
        return out
