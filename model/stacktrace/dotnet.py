""".NET's Exception.ToString(): `Outer: message ---> Inner: message`, the innermost
exception's frames first, each outer one's after `--- End of inner exception stack
trace ---`; `--- End of stack trace from previous location ---` only marks an await."""

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

_FRAME = re.compile(r"^\s*at (?P<fn>[^\s(]+?)(?P<args>\([^)]*\))"
                    r"(?: in (?P<path>.+):line (?P<line>\d+))?\s*$")
_INNER = " ---> "
_END_INNER = "--- End of inner exception stack trace ---"
LIBRARY = ("System.", "Microsoft.")


def frame(found: re.Match[str]) -> Frame:
    owner, _, method = found["fn"].rpartition(".")
    return Frame(path=found["path"] or "", function=method + found["args"],
                 lineno=to_int(found["line"]), module=owner,
                 in_app=in_app(found["path"] or "", *LIBRARY, function=owner + "."))


def parse(text: str) -> Trace | None:
    headers: list[Exception_] = []  # outermost first
    sections: list[list[Frame]] = [[]]  # innermost exception's first
    for line in text.splitlines():
        found = _FRAME.match(line)
        if found:
            sections[-1].append(frame(found))
        elif line.strip() == _END_INNER:
            sections.append([])
        elif line.strip() and not any(sections) and len(sections) == 1:
            for part in line.split(_INNER):
                if part.strip():
                    headers.append(Exception_(*type_and_value(part)))
    if not any(sections):
        return None
    # a section per exception: when headers are missing, unnamed ones stand in
    headers = [Exception_("", "") for _ in range(len(sections) - len(headers))] + headers
    chain = headers[::-1]  # innermost (the root cause) first
    for exception, frames in zip(chain, sections, strict=False):
        exception.frames = frames[::-1]
        exception.relation = CAUSE
    chain = [e for e in chain if e.frames or e.type]
    chain[-1].relation = None
    return Trace("dotnet", chain)
