"""A Sentry event (an `event` item, or the body of the store endpoint) becomes an
ErrorEvent. Pure: a parsed JSON object in, a record out.

Sentry normalises what an SDK sends instead of refusing it, and SDKs never expect
an error for a field: so no field here raises. A field of the wrong type is left
out (or read leniently, receiver/sentry/values.py); only an event that is not an
object at all is the caller's to refuse. Strings come from receiver/jsonbody.py,
which already replaced lone surrogates; a NUL becomes U+FFFD at store time
(storage/wire/storable.py), so nothing is done about either here.

The mapping (docs/sentry.md):
- The chain (receiver/sentry/exceptions.py) is kept as `exceptions`, root cause
  first. The raised exception is its last: `exception_class` is its type ("Error"
  when it has only a value, as for a JavaScript `throw "text"`), `message` its value.
  `backtrace` is one line per frame of it, innermost first, as its platform prints a
  frame; `source_context` its innermost in-app frame with a context line
  (receiver/sentry/frames.py).
- An event without an exception is a message: `exception_class` is "Message",
  `message` is logentry.formatted, else logentry.message, else `message` (a string,
  or an object with `formatted` or `message`). When it carries a stack trace (top
  level, or a thread's, as `attach_stacktrace` sends), it gives the backtrace and
  source context.
- `grouping`: what the grouping processor decides the fingerprint from
  (receiver/sentry/grouping.py); `fingerprint` is empty until it has.
- `level`: fatal, error, warning, info or debug (`warn`, `critical` and `log` read as
  Sentry reads them; Python's numeric logging levels too); otherwise the default:
  "error" for an exception, "info" for a message, as Sentry does.
- `ts_us`: `timestamp` (seconds or RFC 3339), else the time it arrived.
- `trace_id`, `span_id`: contexts.trace's, when they are ids (32 and 16 hex
  characters, not all zero); read lowercase.
- `user_id`: user.id, else email, else username, else ip_address.
- `request_id`: the `request_id` tag.
- `occurrence_key`: the `event_id` (32 hex characters, a UUID's dashes removed) when
  it is one: the store keeps one copy per project and key, so an SDK's retry is
  acknowledged and not counted again, across collectors.
- `params`: `extra`, when an object within the custom door's bounds for params
  (receiver/fields.value_problem: nesting depth, finite numbers) and at most
  MAX_PARAMS_BYTES of JSON; dropped otherwise.
- `environment`, `release`: text, at most 200 characters. `tags`: the event's and
  the derived ones (receiver/sentry/tags.py). `service`: receiver/sentry/values.py.
- `context`: receiver/sentry/context.py (secrets scrubbed).
- `debug_ids`: `debug_meta.images` of type `sourcemap` (code_file -> debug_id, at
  most MAX_IMAGES), and `dist`: what symbolication (processors/symbolicate.py) finds
  the uploaded source maps by; not stored.
"""

from __future__ import annotations

from typing import Any

from model.records import LEVELS, ErrorEvent
from receiver.fields import value_problem
from receiver.sentry import grouping
from receiver.sentry.bounded import json_size
from receiver.sentry.context import context_of
from receiver.sentry.exceptions import MAX_VALUE, exceptions_of
from receiver.sentry.frames import backtrace, frames_of, source_context
from receiver.sentry.tags import event_tags
from receiver.sentry.values import hex_id, service_of, text, time_us

DEFAULT_TYPE = "Error"  # an exception with a value and no type
MAX_IMAGES = 200
MAX_PARAMS_BYTES = 64 * 1024
_LEVEL_NAMES = {**{name: name for name in LEVELS}, "warn": "warning",
                "critical": "fatal", "log": "info"}
_PYTHON_LEVELS = {10: "debug", 20: "info", 30: "warning", 40: "error", 50: "fatal"}


def level_of(raw: Any, default: str) -> str:
    if isinstance(raw, str):
        return _LEVEL_NAMES.get(raw.strip().lower(), default)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return _PYTHON_LEVELS.get(raw, default)
    return default


def _message_text(value: Any) -> tuple[str | None, str | None]:
    """(formatted, template) of a logentry or message object."""
    if not isinstance(value, dict):
        return None, None
    template = text(value.get("message"), MAX_VALUE)
    return text(value.get("formatted"), MAX_VALUE) or template, template


def message_of(event: dict[str, Any]) -> tuple[str, str]:
    """A message event's (message, grouping template)."""
    formatted, template = _message_text(event.get("logentry"))
    if formatted is None:
        raw = event.get("message")
        formatted, template = (_message_text(raw) if isinstance(raw, dict)
                               else (text(raw, MAX_VALUE), None))
    formatted = formatted or ""
    return formatted, template or formatted


def message_frames(event: dict[str, Any]) -> list[dict[str, Any]]:
    """A message event's stack trace: its own, else the crashed or current thread's,
    else the first thread's that has one."""
    frames = frames_of(event.get("stacktrace"))
    if frames:
        return frames
    threads = event.get("threads")
    if isinstance(threads, dict):
        threads = threads.get("values")
    if not isinstance(threads, list):
        return []
    candidates = [t for t in threads[:100] if isinstance(t, dict)]
    candidates.sort(key=lambda t: not (t.get("crashed") is True or t.get("current") is True))
    return next((f for f in (frames_of(t.get("stacktrace")) for t in candidates) if f), [])


def user_id_of(user: Any) -> str | None:
    if not isinstance(user, dict):
        return None
    return next((shown for shown in (text(user.get(name)) for name in
                                     ("id", "email", "username", "ip_address"))
                 if shown is not None), None)


def params_of(extra: Any) -> dict[str, Any] | None:
    if not isinstance(extra, dict) or not extra or value_problem(extra) is not None:
        return None
    if json_size(extra) > MAX_PARAMS_BYTES:
        return None
    return extra


def debug_ids_of(event: dict[str, Any]) -> dict[str, str] | None:
    """The source maps' debug ids an SDK sends by the file each is for."""
    meta = event.get("debug_meta")
    images = meta.get("images") if isinstance(meta, dict) else None
    if not isinstance(images, list):
        return None
    found = {}
    for image in images[:MAX_IMAGES]:
        if not isinstance(image, dict) or image.get("type") != "sourcemap":
            continue
        code_file = text(image.get("code_file"), 2000)
        debug_id = text(image.get("debug_id"), 64)
        if code_file and debug_id:
            found[code_file] = debug_id
    return found or None


def decode_event(event: dict[str, Any], now_us: int) -> ErrorEvent:
    platform = text(event.get("platform")) or "other"
    chain = exceptions_of(event)
    raised = chain[-1] if chain else None
    if raised is not None:
        # A blank type is no class: the custom door (and so a gateway a sidecar
        # forwards to) refuses a blank exception_class.
        exception_class = raised.get("type", "").strip() and raised["type"] or DEFAULT_TYPE
        message = raised.get("value", "")
        frames = raised["frames"]
        sent = grouping.grouping_of(event, raised, platform, "")
    else:
        exception_class = grouping.MESSAGE_TYPE
        message, template = message_of(event)
        frames = message_frames(event)
        sent = grouping.grouping_of(event, None, platform, template)
    tags = event_tags(event, raised)
    contexts = event.get("contexts")
    trace = contexts.get("trace") if isinstance(contexts, dict) else None
    trace = trace if isinstance(trace, dict) else {}
    return ErrorEvent(
        fingerprint="",  # decided by the grouping processor, from `grouping`
        exception_class=exception_class,
        message=message,
        backtrace=backtrace(frames, platform),
        ts_us=time_us(event.get("timestamp")) or now_us,
        request_id=tags.get("request_id"),
        user_id=user_id_of(event.get("user")),
        params=params_of(event.get("extra")),
        source_context=source_context(frames),
        trace_id=hex_id(trace.get("trace_id"), 32),
        span_id=hex_id(trace.get("span_id"), 16),
        service=service_of(event, tags),
        environment=text(event.get("environment")),
        release=text(event.get("release")),
        occurrence_key=hex_id(event.get("event_id"), 32),
        tags=tags or None,
        level=level_of(event.get("level"), "error" if raised is not None else "info"),
        exceptions=chain or None,
        context=context_of(event),
        grouping=sent,
        debug_ids=debug_ids_of(event),
        dist=text(event.get("dist"), 64),
    )
