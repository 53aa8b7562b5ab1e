"""JavaScript's error.stack: V8's (Node, Chrome, Deno) `    at fn (file:line:col)`
and Firefox/Safari's `fn@file:line:col`, innermost first; Node's util.inspect prints a
cause as `[cause]: Error: ...` after the error it caused."""

from __future__ import annotations

import re

from model.stacktrace.model import (
    CAUSE,
    Exception_,
    Frame,
    Trace,
    in_app,
    to_int,
    type_and_value,
)

_GECKO = re.compile(r"^\s*(?P<fn>[^@\s]*)@(?P<loc>.+)$")
_LOCATION = re.compile(r"^(?P<path>.*?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_CAUSE = re.compile(r"^\s*\[cause\]: (?P<rest>.*?)\s*\{?\s*$")


def location_frame(function: str, loc: str) -> Frame | None:
    # eval frames name where eval ran, then the evaluated code: keep the latter
    loc = loc.rsplit(", ", 1)[-1] if loc.startswith("eval at ") else loc
    where = _LOCATION.match(loc)
    function = function.removeprefix("async ").strip()
    if where is None:  # `native`, `<anonymous>`, `index 0`: code without a file
        return Frame(path=loc, function=function, in_app=False)
    return Frame(path=where["path"], function=function, lineno=to_int(where["line"]),
                 colno=to_int(where["col"]), in_app=in_app(where["path"]))


def v8(line: str) -> tuple[str | None, str] | None:
    """(function, location) of `at fn (location)`, (None, location) of a bare
    `at location`; None when the line is no V8 frame. Plain string work, not a
    regular expression: `fn` ends at the first ` (` and `location` at the last `)`,
    which a backtracking pattern finds in time quadratic in the line's length."""
    body = line.strip()
    if body.endswith(" {"):  # Node's util.inspect opens `{` after an error with a cause
        body = body[:-2].rstrip()
    if not body.startswith("at ") or len(body) < 4:
        return None
    body = body[3:]
    if body.endswith(")") and " (" in body:
        function, _, location = body.partition(" (")
        return function, location[:-1]
    return None, body


def frame(line: str) -> Frame | None:
    found = v8(line)
    if found is not None and found[0] is not None:
        return location_frame(found[0], found[1])
    if found is not None and (found[1] in ("native", "<anonymous>")
                              or _LOCATION.match(found[1].removeprefix("async "))):
        return location_frame("", found[1].removeprefix("async "))
    gecko = _GECKO.match(line)
    if gecko and _LOCATION.match(gecko["loc"]):
        return location_frame(gecko["fn"], gecko["loc"])
    return None


def parse(text: str) -> Trace | None:
    printed: list[Exception_] = []  # the error first, then its causes
    for line in text.splitlines():
        found = frame(line)
        cause = _CAUSE.match(line)
        if cause:
            printed.append(Exception_(*type_and_value(cause["rest"])))
        elif found is not None:
            if not printed:
                printed.append(Exception_("", ""))
            printed[-1].frames.append(found)
        elif line.strip() and (not printed or not printed[-1].frames):
            if printed:
                printed[-1].value = (printed[-1].value + "\n" + line.strip()).strip()
            else:
                printed.append(Exception_(*type_and_value(line)))
    if not any(e.frames for e in printed):
        return None
    for exception in printed:
        exception.frames.reverse()
        exception.relation = CAUSE
    chain = printed[::-1]
    chain[-1].relation = None
    return Trace("javascript", chain)
