"""A Sentry event's exception chain, read leniently and bounded.

`exception` is an object with `values`, or (older SDKs) the list itself. Sentry
orders a chain oldest to newest: the root cause first, the exception that was
raised (and caught by the SDK) last; the order is kept. Each exception becomes
{"type", "value", "module", "mechanism", "frames"} with only the keys it has
(model/records.py, ErrorEvent.exceptions); an item that is not an object, or
that has neither a type, a value nor frames, is skipped.

Bounds: at most MAX_EXCEPTIONS per event; a longer chain keeps its root cause and
the MAX_EXCEPTIONS - 1 exceptions nearest the raised one (the ends of a chain are
what explains it). A value is cut at MAX_VALUE characters (Sentry's own limit for
a message), a type or module at MAX_TYPE. Of the mechanism only its scalar fields
are kept: `data` and `meta` are free-form and seldom read.
"""

from __future__ import annotations

from typing import Any

from receiver.sentry.frames import bounded_frames
from receiver.sentry.values import text

MAX_EXCEPTIONS = 10
MAX_VALUE = 8_192
MAX_TYPE = 500
_MECHANISM_TEXT = ("type", "description", "help_link", "source")
_MECHANISM_FLAGS = ("handled", "synthetic", "is_exception_group")
_MECHANISM_IDS = ("exception_id", "parent_id")


def mechanism_of(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    mechanism: dict[str, Any] = {}
    for key in _MECHANISM_TEXT:
        shown = text(raw.get(key), MAX_TYPE)
        if shown is not None:
            mechanism[key] = shown
    for key in _MECHANISM_FLAGS:
        if isinstance(raw.get(key), bool):
            mechanism[key] = raw[key]
    for key in _MECHANISM_IDS:
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
            mechanism[key] = value
    return mechanism or None


def read_exception(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    stacktrace = raw.get("stacktrace")
    return exception_of(raw, stacktrace.get("frames") if isinstance(stacktrace, dict) else None)


def exception_of(raw: dict[str, Any], raw_frames: Any) -> dict[str, Any] | None:
    """One exception of the chain in ErrorEvent's shape, bounded; None when it has
    neither a type, a value nor frames. Shared with the custom error door
    (receiver/custom/error_details.py), whose exceptions carry their frames directly."""
    exception: dict[str, Any] = {}
    for key, limit in (("type", MAX_TYPE), ("value", MAX_VALUE), ("module", MAX_TYPE)):
        shown = text(raw.get(key), limit)
        if shown is not None:
            exception[key] = shown
    mechanism = mechanism_of(raw.get("mechanism"))
    if mechanism is not None:
        exception["mechanism"] = mechanism
    frames = bounded_frames(raw_frames)
    exception["frames"] = frames
    if "type" not in exception and "value" not in exception and not frames:
        return None
    return exception


def bounded_chain(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_EXCEPTIONS: the root cause and those nearest the raised one."""
    if len(chain) > MAX_EXCEPTIONS:
        return chain[:1] + chain[-(MAX_EXCEPTIONS - 1):]
    return chain


def exceptions_of(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The chain, root cause first and the raised exception last; [] for an event
    without one (a message)."""
    raw = event.get("exception")
    if isinstance(raw, dict):
        raw = raw.get("values")
    if not isinstance(raw, list):
        return []
    if len(raw) > 2 * MAX_EXCEPTIONS:  # read no more than can be kept
        raw = raw[:MAX_EXCEPTIONS] + raw[-MAX_EXCEPTIONS:]
    return bounded_chain([e for e in (read_exception(item) for item in raw) if e is not None])
