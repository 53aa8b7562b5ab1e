"""What Sounding derives from a stack trace's frames as Sentry orders them
(outermost first; each a dict of the keys receiver/sentry/frames.py keeps): the
backtrace lines, the frame grouping reads and the source context. In the model, so
that the Sentry door and symbolication (processors/symbolicate.py, which derives them
again from the mapped frames) share one rule."""

from __future__ import annotations

from typing import Any

from model.fingerprint import library_frame
from model.records import SourceContext


def frame_line(frame: dict[str, Any], platform: str) -> str:
    """The frame as its platform prints it in a traceback: Python's
    `File "<path>", line N, in <function>`; Java's `at <module>.<function>(<file>:N)`;
    elsewhere the V8 form shared by Node, browsers and most others,
    `at <function> (<path>:<line>:<column>)`. Missing parts are left out. The path
    is abs_path when sent, else filename, as an OpenTelemetry SDK's text traceback
    prints the absolute one."""
    path = frame.get("abs_path") or frame.get("filename") or ""
    function = frame.get("function") or ""
    lineno = frame.get("lineno")
    if not path and not function:
        return ""  # nothing a traceback would print (an address-only native frame)
    if platform == "java":  # Throwable.printStackTrace: at pkg.Class.method(File.java:N)
        where = frame.get("filename") or "Unknown Source"
        if lineno is not None:
            where += f":{lineno}"
        qualified = ".".join(p for p in (frame.get("module"), function) if p)
        return f"at {qualified}({where})"
    if platform == "python":
        parts = [f'File "{path}"']
        if lineno is not None:
            parts.append(f"line {lineno}")
        if function:
            parts.append(f"in {function}")
        return ", ".join(parts)
    where = path
    if where and lineno is not None:
        where += f":{lineno}"
        if frame.get("colno") is not None:
            where += f":{frame['colno']}"
    if function and where:
        return f"at {function} ({where})"
    return f"at {function or where}"


def backtrace(frames: list[dict[str, Any]], platform: str) -> list[str]:
    """One line per frame, innermost first (the frame that raised on top); frames
    with nothing to print are left out."""
    return [line for line in (frame_line(frame, platform) for frame in reversed(frames))
            if line]


def top_frame(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The frame grouping reads: the innermost in-app frame; when no frame says
    whether it is in-app, the innermost that is not a library's by its path (the
    rule a text traceback gets, model.fingerprint.library_frame); else the
    innermost."""
    if any("in_app" in f for f in frames):
        found = next((f for f in reversed(frames) if f.get("in_app") is True), None)
    else:
        found = next((f for f in reversed(frames) if not library_frame(
            f.get("abs_path") or f.get("filename") or "")), None)
    return found or (frames[-1] if frames else None)


def source_context(frames: list[dict[str, Any]]) -> SourceContext | None:
    """The innermost in-app frame that has a context line and a path (when no frame
    says whether it is in-app at all, the innermost with both). A frame without a
    path keeps its context in `exceptions` only: a source context names its file, as
    the custom door requires (so a forwarded error is never refused upstream)."""
    says_in_app = any("in_app" in f for f in frames)
    for frame in reversed(frames):
        if "context_line" not in frame or (says_in_app and frame.get("in_app") is not True):
            continue
        path = frame.get("abs_path") or frame.get("filename")
        if not path or not path.strip():
            continue
        return SourceContext(
            file=path,
            lineno=frame.get("lineno", 0), context_line=frame["context_line"],
            pre_context=list(frame.get("pre_context", [])),
            post_context=list(frame.get("post_context", [])))
    return None
