"""The JVM's Throwable.printStackTrace() (Java, Kotlin, Scala): the exception, its
frames innermost first, then each `Caused by:` with its own frames, the frames it
shares with the exception above folded into `... N more`."""

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

# `at [loader//][module@version/]a.b.C.m(C.java:12)`, or `(Native Method)`,
# `(Unknown Source)`, `(C.java)`.
_FRAME = re.compile(r"^\s*at (?:[\w.$-]+//)?(?:[\w.$-]+(?:@[\w.$-]+)?/)?"
                    r"(?P<fn>[\w$.<>/-]+)\((?P<where>[^()\s:]+\.\w+(?::(?P<line>\d+))?"
                    r"|Native Method|Unknown Source)\)\s*$")
_MORE = re.compile(r"^\s*\.\.\. (?P<n>\d+) (?:more|common frames omitted)\s*$")
_CAUSED = re.compile(r"^\s*Caused by: (?P<rest>.*)$")
_SUPPRESSED = re.compile(r"^\s*Suppressed: ")
LIBRARY = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.")


def frame(found: re.Match[str]) -> Frame:
    owner, _, method = found["fn"].rpartition(".")
    where = found["where"]
    path = where.split(":", 1)[0] if found["line"] or "." in where else ""
    return Frame(path=path, function=method, lineno=to_int(found["line"]), module=owner,
                 in_app=in_app(found.group(0), *LIBRARY, function=owner + "."))


def parse(text: str) -> Trace | None:
    printed: list[Exception_] = []  # as printed: the exception raised last first
    innermost_first: list[list[Frame]] = []
    suppressed = False
    for line in text.splitlines():
        found = _FRAME.match(line)
        caused = _CAUSED.match(line)
        if caused:
            suppressed = False
            printed.append(Exception_(*type_and_value(caused["rest"])))
            innermost_first.append([])
        elif _SUPPRESSED.match(line):
            suppressed = True  # its frames belong to no exception of the chain
        elif suppressed:
            continue
        elif found:
            if not printed:
                printed.append(Exception_("", ""))
                innermost_first.append([])
            innermost_first[-1].append(frame(found))
        elif (more := _MORE.match(line)) and len(innermost_first) > 1:
            shared = int(more["n"])
            above = innermost_first[-2]
            innermost_first[-1].extend(above[max(0, len(above) - shared):])
        elif line.strip() and not printed:
            printed.append(Exception_(*type_and_value(line)))
            innermost_first.append([])
        elif line.strip() and printed and not innermost_first[-1]:
            printed[-1].value = (printed[-1].value + "\n" + line.strip()).strip()
    if not any(innermost_first):
        return None
    for exception, frames in zip(printed, innermost_first, strict=True):
        exception.frames = frames[::-1]
        exception.relation = CAUSE
    chain = printed[::-1]
    chain[-1].relation = None
    return Trace("java", chain)
