"""A Sentry stack trace's frames, read leniently and bounded, and what Sounding
derives from them (model/stacktrace/frames.py, re-exported here): the backtrace
lines, the top frame for grouping and the source context.

Sentry orders frames outermost first (the caller before the callee), so the frame
that raised is the last one. Only these keys of a frame are kept: filename,
abs_path, function, module, lineno, colno, in_app, context_line, pre_context and
post_context (model/records.py, ErrorEvent.exceptions). `vars` (the frame's
local variables) is deliberately dropped: it is large and it is where passwords
and tokens sit.

Bounds: at most MAX_FRAMES frames per stack trace; beyond, the middle goes (as
Sentry trims it): the KEEP_OUTERMOST outermost frames stay (where the request or
job entered) and the innermost ones (where it failed). Text is cut at
MAX_FRAME_TEXT characters, and pre/post context at MAX_CONTEXT_LINES lines (the
lines nearest the failing line are kept).
"""

from __future__ import annotations

from typing import Any

from model.stacktrace.frames import backtrace, frame_line, source_context, top_frame
from receiver.sentry.values import text

MAX_FRAMES = 250
KEEP_OUTERMOST = 10
MAX_FRAME_TEXT = 1_000
MAX_CONTEXT_LINES = 20
MAX_LINENO = 2**31 - 1

_TEXT_KEYS = ("filename", "abs_path", "function", "module", "context_line")
_NUMBER_KEYS = ("lineno", "colno")


def _number(value: Any) -> int | None:
    """A line or column number: a non-negative integer (a float with no fraction,
    as some SDKs send, is read as one); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_LINENO:
        return value
    return None


def _lines(value: Any, keep_last: bool) -> list[str] | None:
    if not isinstance(value, list):
        return None
    # Cut to the lines kept first: a frame's context is read for every frame of an event.
    value = value[-MAX_CONTEXT_LINES:] if keep_last else value[:MAX_CONTEXT_LINES]
    return [line[:MAX_FRAME_TEXT] if isinstance(line, str) else "" for line in value]


def read_frame(raw: Any) -> dict[str, Any] | None:
    """One frame with only the keys it has of those kept; None for a frame that is
    not an object."""
    if not isinstance(raw, dict):
        return None
    frame: dict[str, Any] = {}
    get = raw.get
    for key in _TEXT_KEYS:
        value = get(key)
        if type(value) is str:  # nearly always: text() is for what an SDK got wrong
            # context_line keeps its leading spaces and may be empty (a blank line).
            if value or key == "context_line":
                frame[key] = value[:MAX_FRAME_TEXT]
        elif value is not None:
            shown = text(value, MAX_FRAME_TEXT)
            if shown is not None:
                frame[key] = shown
    for key in _NUMBER_KEYS:
        value = get(key)
        if type(value) is int and 0 <= value <= MAX_LINENO:
            frame[key] = value
        elif value is not None:
            number = _number(value)
            if number is not None:
                frame[key] = number
    in_app = get("in_app")
    if in_app is True or in_app is False:
        frame["in_app"] = in_app
    pre = _lines(get("pre_context"), keep_last=True)
    if pre is not None:
        frame["pre_context"] = pre
    post = _lines(get("post_context"), keep_last=False)
    if post is not None:
        frame["post_context"] = post
    return frame


def frames_of(stacktrace: Any) -> list[dict[str, Any]]:
    """The frames of a stack trace object, outermost first, bounded (see module)."""
    raw = stacktrace.get("frames") if isinstance(stacktrace, dict) else None
    return bounded_frames(raw)


def bounded_frames(raw: Any) -> list[dict[str, Any]]:
    """A list of frames, outermost first, bounded (see module); [] for anything but
    a list. Shared with the custom error door (receiver/custom/error_details.py), which
    hands it frames already checked, so that both doors keep one bound."""
    if not isinstance(raw, list):
        return []
    if len(raw) > MAX_FRAMES:
        raw = raw[:KEEP_OUTERMOST] + raw[-(MAX_FRAMES - KEEP_OUTERMOST):]
    frames = []
    for item in raw:
        frame = read_frame(item)
        if frame is not None:
            frames.append(frame)
    return frames



__all__ = ["backtrace", "bounded_frames", "frame_line", "frames_of", "read_frame",
           "source_context", "top_frame"]
