"""Python's traceback.print_exc(): frames outermost first, the exception last, chained
exceptions root cause first, joined by the two sentences Python prints."""

from __future__ import annotations

import re

from model.stacktrace.model import (
    CAUSE,
    CONTEXT,
    Exception_,
    Frame,
    Trace,
    in_app,
    to_int,
    type_and_value,
)

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]*)", line (?P<line>\d+)(?:, in (?P<fn>.*))?$')
_JOINS = {
    "The above exception was the direct cause of the following exception:": CAUSE,
    "During handling of the above exception, another exception occurred:": CONTEXT,
}
_HEAD = re.compile(r"^\s*(?:Exception Group )?Traceback \(most recent call last\):$")
# An exception group (3.11) prints each member indented behind `| `, between
# `+---------------- 1 ----------------` rules: the bars are dropped, the rules skipped,
# and each member is one more exception of the chain.
_GROUP_BARS = re.compile(r"^\s*(?:\| ?)+")
_GROUP_RULE = re.compile(r"^\s*\+[-+ \d.]*$|^\s*\+-[-+]*\s*\d+\s*-+$")
# Lines that are neither frames nor the exception: 3.11's carets, the elision of a
# recursion, and a Python 3.13 note.
_NOISE = re.compile(r"^\s*[~^]+\s*$|^\s*\[Previous line repeated \d+ more times?\]$")


def parse(text: str) -> Trace | None:
    exceptions: list[Exception_] = []
    current = Exception_("", "")
    tail: list[str] = []  # the exception's lines, after the last frame
    seen_frame = False

    def close(relation: str | None) -> None:
        nonlocal current, tail
        if current.frames or tail:
            if tail:
                current.type, current.value = type_and_value(tail[0])
                current.value = "\n".join([current.value, *tail[1:]]).strip()
            current.relation = relation
            exceptions.append(current)
        current, tail = Exception_("", ""), []

    for raw in text.splitlines():
        if _GROUP_RULE.match(raw):
            continue
        line = _GROUP_BARS.sub("", raw, count=1) if raw.lstrip().startswith("|") else raw
        stripped = line.strip()
        frame = _FRAME.match(line)
        if frame:
            seen_frame = True
            tail = []
            path = frame["path"]
            current.frames.append(Frame(path=path, function=frame["fn"] or "",
                                        lineno=to_int(frame["line"]),
                                        in_app=in_app(line)))
        elif stripped in _JOINS:
            close(_JOINS[stripped])
        elif _HEAD.match(line):
            if tail:  # a traceback after a whole one, with no sentence between
                close(None)
        elif not stripped or _NOISE.match(line):
            continue
        elif line[:1].isspace() and current.frames and not tail:
            last = current.frames[-1]
            if not last.source:  # the code line printed under its frame
                current.frames[-1] = Frame(last.path, last.function, last.lineno,
                                           module=last.module, in_app=last.in_app,
                                           source=stripped)
        else:
            tail.append(line.rstrip())
    close(None)
    if not seen_frame or not exceptions:
        return None
    exceptions[-1].relation = None
    return Trace("python", exceptions)
