"""Ruby's uncaught-exception report: `file.rb:12:in 'm': message (Type)` then
`\tfrom file.rb:5:in 'n'` lines, innermost first (a logged `backtrace` is the same
lines without `from`). Ruby before 3.4 quotes the method as `m'."""

from __future__ import annotations

import re

from model.stacktrace.model import Exception_, Frame, Trace, in_app, to_int

_FRAME = re.compile(r"^\s*(?:from )?(?P<path>[^\s:@][^:@]*?|[A-Za-z]:[\\/][^:@]*?)"
                    r":(?P<line>\d+)(?::in [`'](?P<fn>[^']*)')?(?::\s(?P<rest>.*))?$")
_MESSAGE = re.compile(r"^(?P<value>.*) \((?P<type>[\w:]+)\)$", re.DOTALL)


def parse(text: str) -> Trace | None:
    exception = Exception_("", "")
    for line in text.splitlines():
        found = _FRAME.match(line)
        if found is None or (found["fn"] is None and not found["path"].endswith(".rb")):
            continue
        if found["rest"] and not exception.frames:
            message = _MESSAGE.match(found["rest"])
            exception.type, exception.value = (message["type"], message["value"]) \
                if message else ("", found["rest"])
        owner, _, method = (found["fn"] or "").rpartition("#")
        exception.frames.append(Frame(path=found["path"], function=method,
                                      lineno=to_int(found["line"]), module=owner,
                                      in_app=in_app(found["path"])))
    if not exception.frames:
        return None
    exception.frames.reverse()
    return Trace("ruby", [exception])
