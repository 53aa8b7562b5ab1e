"""JavaScript frames mapped back to their original sources by the uploaded source
maps, before the grouping rule reads them (processors/grouping.py runs this first):
so the fingerprint uses the original in-app frame, and two builds of one bug, minified
differently, are one group.

A frame is mapped when it has a line and a column and its map is found (model/
sourcemap.SourceMaps): by the debug id the event names for the frame's file, else by
the event's release, dist and the file's URL. A mapped frame gets the original path,
line, column, function and source lines, and keeps what was sent under `raw`, with
`mapped` saying which map and how it was found; a frame that could not be mapped
keeps what was sent and says why under `unmapped`. The backtrace, the source context
and the frame the grouping rule reads are derived again from the mapped frames
(model/stacktrace/frames.py, as the Sentry door derives them).

OpenTelemetry exceptions arrive as text (`exception.stacktrace`): a JavaScript one
(V8's or Firefox's form, model/stacktrace/javascript.py) with a release
(`service.version`) is parsed into frames and mapped by release and the frames' URLs;
when any frame maps, the error gets the parsed chain as `exceptions` (so the page shows
each frame, mapped or not) and its backtrace is the mapped one, which the grouping rule
reads.
"""

from __future__ import annotations

import re
from typing import Any

from model.fingerprint import library_frame
from model.records import ErrorEvent
from model.sourcemap import SourceMaps
from model.stacktrace import javascript
from model.stacktrace.frames import backtrace, frame_line, source_context, top_frame

# Platforms whose frames are JavaScript (the event's `platform`).
JS_PLATFORMS = frozenset(("javascript", "node"))
RAW_KEYS = ("abs_path", "filename", "function", "module", "lineno", "colno")
# Files a map may be for: scripts (a query string or fragment after the name is
# allowed); other frames (node:internal, native code) are not looked up.
_SCRIPT = re.compile(r"\.(?:js|mjs|cjs|jsx)(?:[?#].*)?$")
CONTEXT_KEYS = ("context_line", "pre_context", "post_context")


def wants_mapping(error: ErrorEvent) -> bool:
    if not error.exceptions:
        return False
    platform = (error.context or {}).get("platform")
    return bool(error.debug_ids) or (error.release is not None and platform in JS_PLATFORMS)


def map_frame(frame: dict[str, Any], project_id: int, error: ErrorEvent,
              maps: SourceMaps) -> bool:
    """Map one frame in place; whether it was."""
    path = frame.get("abs_path") or frame.get("filename")
    lineno, colno = frame.get("lineno"), frame.get("colno")
    if not path or lineno is None or colno is None or "raw" in frame:
        return False
    debug_id = error.debug_ids.get(path) if error.debug_ids else None
    if debug_id is None and (error.release is None or not _SCRIPT.search(path)):
        return False
    loaded, why = maps.find(project_id, debug_id, error.release, error.dist, path)
    if loaded is None:
        frame["unmapped"] = why
        return False
    original = loaded.lookup(lineno, colno)
    if original is None:
        frame["unmapped"] = f"{loaded.map_url} maps nothing at line {lineno}, column {colno}"
        return False
    frame["raw"] = {key: frame[key] for key in (*RAW_KEYS, *CONTEXT_KEYS) if key in frame}
    for key in (*CONTEXT_KEYS, "module"):
        frame.pop(key, None)
    frame["abs_path"] = frame["filename"] = original.path
    frame["lineno"], frame["colno"] = original.lineno, original.colno
    if original.function:
        frame["function"] = original.function
    if original.context_line is not None:
        frame["context_line"] = original.context_line
        frame["pre_context"] = original.pre_context
        frame["post_context"] = original.post_context
    if library_frame(original.path):
        frame["in_app"] = False
    frame["mapped"] = {"map": loaded.map_url, "via": loaded.via}
    if original.context_line is None:
        frame["mapped"]["note"] = "the map carries no sourcesContent: no source lines"
    return True


def _text_chain(error: ErrorEvent) -> list[dict[str, Any]] | None:
    """An OpenTelemetry JavaScript exception's text as Sentry-shaped frames, or None
    when it is no such thing (or names no script a map could be for)."""
    if error.release is None or not any(".js" in line for line in error.backtrace):
        return None
    trace = javascript.parse("\n".join(error.backtrace))
    if trace is None:
        return None
    chain = [{"type": e.type, "value": e.value, "frames": [
        {"abs_path": f.path, "filename": f.path, "function": f.function, "lineno": f.lineno,
         "colno": f.colno, "in_app": f.in_app}
        for f in e.frames]} for e in trace.exceptions]
    raised = chain[-1]
    raised["type"] = raised["type"] or error.exception_class
    raised["value"] = raised["value"] or error.message
    return chain


def symbolicate(project_id: int, error: ErrorEvent, maps: SourceMaps) -> bool:
    """Map the error's frames; whether any was (then its derived fields are renewed)."""
    if error.exceptions is None and error.backtrace:
        chain = _text_chain(error)
        if chain is None:
            return False
        mapped = False
        for exception in chain:
            for frame in exception["frames"]:
                mapped = map_frame(frame, project_id, error, maps) or mapped
        if not mapped:
            return False
        error.exceptions = chain
        frames = chain[-1]["frames"]
        error.backtrace = backtrace(frames, "javascript")
        error.source_context = source_context(frames)
        return True
    if not wants_mapping(error):
        return False
    assert error.exceptions is not None
    mapped = False
    for exception in error.exceptions:
        for frame in exception.get("frames") or ():
            mapped = map_frame(frame, project_id, error, maps) or mapped
    if not mapped:
        return False
    platform = str((error.context or {}).get("platform") or "javascript")
    frames = error.exceptions[-1].get("frames") or []
    error.backtrace = backtrace(frames, platform)
    error.source_context = source_context(frames)
    if error.grouping is not None and error.grouping.frame is not None:
        top = top_frame(frames)
        error.grouping.frame = "" if top is None else frame_line(top, platform)
    return True
