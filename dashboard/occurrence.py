"""What the group page draws of one occurrence's exception chain and context, read
from the stored shapes (model/records.py, ErrorEvent.exceptions and .context)
into plain lists the templates loop over.

Pure functions of stored data: whatever an event holds (a Sentry SDK's, a plugin's,
an older row), they return something drawable and never raise, since a page must
answer for any row. Everything returned is still client text: the templates escape it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from model import stacktrace

# How one exception of a chain led to the next (the newer one), from the older one's
# mechanism `source`: Python's __cause__ / __context__, JavaScript's `cause`.
RELATIONS = {
    "__cause__": "The above exception was the direct cause of the following exception",
    "cause": "The above exception was the direct cause of the following exception",
    "__context__": "During handling of the above exception, another exception occurred",
}
THEN = "Followed by"


@dataclass(frozen=True)
class SourceLine:
    lineno: int | None
    text: str
    failing: bool


@dataclass(frozen=True)
class Frame:
    path: str  # filename, else abs_path; "" when neither was sent
    function: str
    lineno: int | None
    colno: int | None
    module: str
    in_app: bool | None  # None: the sender did not say
    source: list[SourceLine]  # pre, context and post lines; [] when none were sent
    # Symbolication (processors/symbolicate.py): the minified position the frame was
    # mapped from (`assets/index.js:1:48213`) and how its map was found, or why it
    # could not be mapped; "" when neither.
    mapped_from: str = ""
    mapped_via: str = ""
    mapped_note: str = ""
    unmapped: str = ""


@dataclass(frozen=True)
class FrameRun:
    """Consecutive frames shown alike: in-app frames open, library frames collapsed."""

    collapsed: bool
    frames: list[Frame]


@dataclass(frozen=True)
class ChainedException:
    type: str
    value: str
    module: str
    mechanism: dict[str, Any]
    runs: list[FrameRun]  # innermost frame first
    relation: str | None  # how it leads to the next exception shown; None for the last
    frame_count: int = 0


@dataclass(frozen=True)
class Breadcrumb:
    time: str
    category: str
    level: str
    message: str
    data: str  # compact JSON of `data`, "" when none


@dataclass(frozen=True)
class Context:
    """The occurrence's context as small key/value tables and a timeline."""

    user: list[tuple[str, str]] = field(default_factory=list)
    request: list[tuple[str, str]] = field(default_factory=list)
    # (name, rows) per context: browser, os, runtime, device, trace, ...
    contexts: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    breadcrumbs: list[Breadcrumb] = field(default_factory=list)
    logentry: str | None = None  # the formatted message of a message event
    labels: list[tuple[str, str]] = field(default_factory=list)  # platform, transaction...
    trimmed: list[str] = field(default_factory=list)  # parts dropped for size

    @property
    def empty(self) -> bool:
        return not (self.user or self.request or self.contexts or self.breadcrumbs
                    or self.logentry or self.labels or self.trimmed)


def text(value: Any) -> str:
    """A value as one cell: strings as they are, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _lines(value: Any) -> list[str]:
    return [text(line) for line in value] if isinstance(value, list) else []


def source_lines(frame: dict[str, Any]) -> list[SourceLine]:
    """The frame's pre, context and post lines, numbered from its line number when it
    has one; [] when it sent no context line."""
    if not isinstance(frame.get("context_line"), str):
        return []
    pre, post = _lines(frame.get("pre_context")), _lines(frame.get("post_context"))
    lineno = _int(frame.get("lineno"))

    def number(offset: int) -> int | None:
        return None if lineno is None or lineno + offset < 1 else lineno + offset
    return ([SourceLine(number(i - len(pre)), line, False) for i, line in enumerate(pre)]
            + [SourceLine(lineno, frame["context_line"], True)]
            + [SourceLine(number(i + 1), line, False) for i, line in enumerate(post)])


def minified_position(raw: Any) -> str:
    """`file:line:column` of the frame as sent, before it was mapped."""
    if not isinstance(raw, dict):
        return ""
    where = text(raw.get("abs_path") or raw.get("filename"))
    for key in ("lineno", "colno"):
        number = _int(raw.get(key))
        if number is not None:
            where += f":{number}"
    function = text(raw.get("function"))
    return f"{where} in {function}" if function else where


def read_frame(raw: dict[str, Any]) -> Frame:
    in_app = raw.get("in_app")
    mapped = raw.get("mapped") if isinstance(raw.get("mapped"), dict) else {}
    return Frame(path=text(raw.get("filename") or raw.get("abs_path")),
                 function=text(raw.get("function")), lineno=_int(raw.get("lineno")),
                 colno=_int(raw.get("colno")), module=text(raw.get("module")),
                 in_app=in_app if isinstance(in_app, bool) else None,
                 source=source_lines(raw),
                 mapped_from=minified_position(raw.get("raw")),
                 mapped_via=(f"{text(mapped.get('via'))} ({text(mapped.get('map'))})"
                             if mapped else ""),
                 mapped_note=text(mapped.get("note")) if mapped else "",
                 unmapped=text(raw.get("unmapped")))


def frame_runs(raw_frames: Any) -> list[FrameRun]:
    """Frames innermost first (stored outermost first, as Sentry sends them), in runs.
    When any frame is marked in-app, the others are library frames and collapsed;
    when none is, nothing is collapsed (the sender did not tell them apart)."""
    frames = [read_frame(f) for f in reversed(raw_frames) if isinstance(f, dict)] \
        if isinstance(raw_frames, list) else []
    any_in_app = any(f.in_app for f in frames)
    runs: list[FrameRun] = []
    for frame in frames:
        collapsed = any_in_app and not frame.in_app
        if runs and runs[-1].collapsed == collapsed:
            runs[-1].frames.append(frame)
        else:
            runs.append(FrameRun(collapsed, [frame]))
    return runs


def chain(exceptions: list[Any] | None) -> list[ChainedException]:
    """The chain as stored: the root cause first, the exception raised last, each
    with how it led to the next one."""
    items = [e for e in exceptions or [] if isinstance(e, dict)]
    out = []
    for i, raw in enumerate(items):
        found = raw.get("mechanism")
        mechanism: dict[str, Any] = found if isinstance(found, dict) else {}
        relation = None
        if i + 1 < len(items):
            relation = RELATIONS.get(text(mechanism.get("source")), THEN)
        frames = raw.get("frames")
        out.append(ChainedException(
            type=text(raw.get("type")), value=text(raw.get("value")),
            module=text(raw.get("module")), mechanism=mechanism,
            runs=frame_runs(frames), relation=relation,
            frame_count=len(frames) if isinstance(frames, list) else 0))
    return out


def with_source(frame: dict[str, Any], source: Any) -> dict[str, Any]:
    """The frame with the error's one source context (/ingest/errors' source_context)
    when it is that frame's: same line, and a path ending in the context's file."""
    if not isinstance(source, dict) or not isinstance(source.get("context_line"), str):
        return frame
    file = text(source.get("file"))
    if (not file or frame["lineno"] != _int(source.get("lineno"))
            or not frame["filename"].replace("\\", "/").endswith(file)):
        return frame
    return {**frame, "pre_context": source.get("pre_context"),
            "context_line": source["context_line"], "post_context": source.get("post_context")}


def text_chain(backtrace: Any, source_context: Any = None) -> list[ChainedException]:
    """An error whose stack trace came as text lines (OTLP's exception.stacktrace, a
    log record's, /ingest/errors' backtrace), parsed (model/stacktrace) into the
    chain a Sentry event gives, so that it is drawn alike; [] when the text is no
    trace of a language we know (the page then shows the lines as sent)."""
    if not isinstance(backtrace, list) or not backtrace:
        return []
    trace = stacktrace.parse("\n".join(text(line) for line in backtrace))
    if trace is None:
        return []
    return chain([{
        "type": e.type, "value": e.value,
        "mechanism": {"source": e.relation} if e.relation else {},
        "frames": [with_source({"filename": f.path, "function": f.function,
                                "lineno": f.lineno, "colno": f.colno, "module": f.module,
                                "in_app": f.in_app,
                                **({"context_line": f.source} if f.source else {})},
                               source_context)
                   for f in e.frames]} for e in trace.exceptions])


def rows(value: Any) -> list[tuple[str, str]]:
    """An object as (key, cell) rows sorted by key; a non-object as one row."""
    if isinstance(value, dict):
        return [(str(k), text(value[k])) for k in sorted(value, key=str)]
    return [] if value is None else [("value", text(value))]


REQUEST_ORDER = ("method", "url", "query_string", "data", "headers", "env", "cookies")


def request_rows(request: Any) -> list[tuple[str, str]]:
    """method and URL first, then what else was sent; headers one row each."""
    if not isinstance(request, dict):
        return rows(request)
    out = []
    for key in REQUEST_ORDER + tuple(sorted(k for k in request if k not in REQUEST_ORDER)):
        if key not in request:
            continue
        value = request[key]
        if key == "headers" and isinstance(value, dict):
            out += [(f"header {k}", text(v)) for k, v in sorted(value.items())]
        elif key == "headers" and isinstance(value, list):  # [[name, value], ...]
            out += [(f"header {text(p[0])}", text(p[1])) for p in value
                    if isinstance(p, list) and len(p) == 2]
        else:
            out.append((key, text(value)))
    return out


def crumb_time(value: Any) -> str:
    """A breadcrumb's timestamp (seconds since the epoch, or ISO 8601) as UTC time
    of day to the millisecond; what was sent when it is neither."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            at = datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return text(value)
        return at.strftime("%H:%M:%S.") + f"{at.microsecond // 1000:03d}"
    if isinstance(value, str):
        try:
            at = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        return at.strftime("%H:%M:%S.") + f"{at.microsecond // 1000:03d}"
    return ""


def breadcrumbs(raw: Any) -> list[Breadcrumb]:
    return [Breadcrumb(crumb_time(c.get("timestamp")), text(c.get("category") or c.get("type")),
                       text(c.get("level")), text(c.get("message")),
                       text(c["data"]) if c.get("data") not in (None, {}) else "")
            for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def logentry(context: dict[str, Any]) -> str | None:
    """A message event's text: logentry's formatted (else its template), or message."""
    for name in ("logentry", "message"):
        part = context.get(name)
        if isinstance(part, dict):
            shown = part.get("formatted") or part.get("message")
            if shown:
                return text(shown)
        elif isinstance(part, str) and part:
            return part
    return None


def context_of(context: dict[str, Any] | None) -> Context:
    if not context:
        return Context()
    contexts = context.get("contexts")
    return Context(
        user=rows(context.get("user")), request=request_rows(context.get("request")),
        contexts=[(str(name), rows(part)) for name, part in sorted(contexts.items())]
        if isinstance(contexts, dict) else [],
        breadcrumbs=breadcrumbs(context.get("breadcrumbs")), logentry=logentry(context),
        labels=[(name, text(context[name])) for name in ("platform", "transaction",
                                                         "server_name")
                if context.get(name) not in (None, "")],
        trimmed=_lines(context.get("_trimmed")))
