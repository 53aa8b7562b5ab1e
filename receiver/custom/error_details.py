"""An error's details on the custom doors (/ingest/errors, /batch and gRPC): `level`,
`exceptions`, `context` and `event_id`, all optional (docs/sending-data.md, "Error details").

These are what the Sentry door fills from an event, and what the forward exporter
sends on (exporters/forward/encode.py), so a sidecar's Sentry error reaches its
gateway whole. Two steps:

1. Checked here, strictly, like every field of this door: a value of the wrong
   structure or type is a 400 naming it (`exceptions[0].frames[3].lineno`), every
   problem at once.
2. Bounded by the Sentry door's own functions (receiver/sentry/exceptions.py,
   frames.py, context.py): too many frames, too long a value, too big a context are
   cut, not refused, and secrets are filtered, exactly as for a Sentry event. One
   rule for both doors; bounding what was already bounded changes nothing, so a
   forwarded error is stored upstream as it was stored here.

`event_id` is the error's occurrence key (ErrorEvent.occurrence_key): the store keeps
one error per project and key, so a retried request (or a forward sent twice) is
acknowledged and counted once. The same key space as a Sentry event's `event_id`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from model.records import LEVELS
from receiver import fields
from receiver.fields import Problems
from receiver.sentry.context import TRIMMED, bounded_context
from receiver.sentry.exceptions import bounded_chain, exception_of
from receiver.sentry.frames import MAX_LINENO

# The keys whose presence makes decode_error read this module at all.
NAMES = frozenset({"level", "exceptions", "context", "event_id"})

_EXCEPTION_TEXT = ("type", "value", "module")
_FRAME_TEXT = ("filename", "abs_path", "function", "module", "context_line")
_FRAME_NUMBERS = ("lineno", "colno")
_FRAME_LINES = ("pre_context", "post_context")
_MECHANISM_TEXT = ("type", "description", "help_link", "source")
_MECHANISM_FLAGS = ("handled", "synthetic", "is_exception_group")
_MECHANISM_IDS = ("exception_id", "parent_id")
_CONTEXT_OBJECTS = ("user", "request", "contexts", "logentry", "sdk")
_CONTEXT_TEXT = ("platform", "server_name", "transaction")
_UUID_DASHES = (8, 13, 18, 23)


class Details(NamedTuple):
    level: str | None
    exceptions: list[dict[str, Any]] | None
    context: dict[str, Any] | None
    occurrence_key: str | None


def _typed(obj: dict[str, Any], name: str, kind: type | tuple[type, ...], expected: str,
           problems: Problems) -> bool:
    """Whether `obj[name]` is absent or of `kind`; a problem naming it otherwise."""
    value = obj.get(name)
    if value is None or isinstance(value, kind):
        return True
    problems.add(name, f"must be {expected}, got {fields.type_name(value)}")
    return False


def _check_frame(frame: Any, problems: Problems) -> None:
    if not isinstance(frame, dict):
        problems.add("", f"must be an object, got {fields.type_name(frame)}")
        return
    for name in _FRAME_TEXT:
        _typed(frame, name, str, "a string", problems)
    for name in _FRAME_NUMBERS:
        fields.integer(frame, name, problems, minimum=0, maximum=MAX_LINENO)
    _typed(frame, "in_app", bool, "a boolean", problems)
    for name in _FRAME_LINES:
        fields.string_list(frame, name, problems)


def _check_mechanism(mechanism: Any, problems: Problems) -> None:
    if not _typed({"mechanism": mechanism}, "mechanism", dict, "an object", problems):
        return
    sub = Problems(f"{problems.prefix}mechanism.")
    for name in _MECHANISM_TEXT:
        _typed(mechanism, name, str, "a string", sub)
    for name in _MECHANISM_FLAGS:
        _typed(mechanism, name, bool, "a boolean", sub)
    for name in _MECHANISM_IDS:
        fields.integer(mechanism, name, sub, minimum=0, maximum=2**31 - 1)
    problems.items.extend(sub.items)


def _exception(raw: Any, problems: Problems) -> dict[str, Any] | None:
    """One exception of the chain, checked and then bounded."""
    if not isinstance(raw, dict):
        problems.add("", f"must be an object, got {fields.type_name(raw)}")
        return None
    found = len(problems.items)
    for name in _EXCEPTION_TEXT:
        _typed(raw, name, str, "a string", problems)
    if raw.get("mechanism") is not None:
        _check_mechanism(raw["mechanism"], problems)
    frames = raw.get("frames")
    if _typed(raw, "frames", list, "an array of objects", problems) and frames:
        for index, frame in enumerate(frames):
            sub = Problems(f"{problems.prefix}frames[{index}].")
            _check_frame(frame, sub)
            problems.items.extend(_named(sub.items))
    if len(problems.items) > found:
        return None
    exception = exception_of(raw, frames)
    if exception is None:
        problems.add("", "must have a type, a value or frames")
    return exception


def _named(items: list[dict[str, str]]) -> list[dict[str, str]]:
    """Problems of a whole item (added as "") named by their prefix alone."""
    return [{**item, "field": item["field"].rstrip(".")} for item in items]


def _exceptions(obj: dict[str, Any], problems: Problems) -> list[dict[str, Any]] | None:
    raw = obj.get("exceptions")
    if not _typed(obj, "exceptions", list, "an array of objects", problems) or not raw:
        return None
    chain = []
    for index, item in enumerate(raw):
        sub = Problems(f"{problems.prefix}exceptions[{index}].")
        exception = _exception(item, sub)
        problems.items.extend(_named(sub.items))
        if exception is not None:
            chain.append(exception)
    return None if problems else bounded_chain(chain) or None


def _context(obj: dict[str, Any], problems: Problems) -> dict[str, Any] | None:
    raw = fields.obj_field(obj, "context", problems)
    if not raw:
        return None
    sub = Problems(f"{problems.prefix}context.")
    for name in _CONTEXT_OBJECTS:
        _typed(raw, name, dict, "an object", sub)
    for name in _CONTEXT_TEXT:
        _typed(raw, name, str, "a string", sub)
    _typed(raw, "message", (str, dict), "a string or an object", sub)
    crumbs = raw.get("breadcrumbs")
    if _typed(raw, "breadcrumbs", list, "an array of objects", sub) and crumbs and not all(
            isinstance(c, dict) for c in crumbs):
        sub.add("breadcrumbs", "must be an array of objects")
    trimmed = raw.get(TRIMMED)
    if _typed(raw, TRIMMED, list, "an array of strings", sub) and trimmed and not all(
            isinstance(t, str) for t in trimmed):
        sub.add(TRIMMED, "must be an array of strings")
    problems.items.extend(sub.items)
    return None if sub else bounded_context(raw)


def _event_id(obj: dict[str, Any], problems: Problems) -> str | None:
    """32 hexadecimal characters, or a UUID with its dashes; read lowercase."""
    value = obj.get("event_id")
    if value is None:
        return None
    if isinstance(value, str) and len(value) == 36 and all(
            value[i] == "-" for i in _UUID_DASHES):
        value = value.replace("-", "")
    return fields.hex_id({"event_id": value}, "event_id", problems, 32)


def decode_details(obj: dict[str, Any], problems: Problems) -> Details:
    """The details of the error record `obj`; each bad field is added to `problems`."""
    level = obj.get("level")
    if level is not None and level not in LEVELS:
        problems.add("level", f"must be one of {', '.join(LEVELS)}, got "
                              f"{level[:64]!r}" if isinstance(level, str) else
                     f"must be a string, got {fields.type_name(level)}")
        level = None
    return Details(level, _exceptions(obj, problems), _context(obj, problems),
                   _event_id(obj, problems))
