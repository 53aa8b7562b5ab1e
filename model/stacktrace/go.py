"""A Go panic: `panic: message`, then goroutine dumps (`goroutine 1 [running]:`) of
function lines each followed by `\tfile.go:12 +0x1d`, innermost first. Only the first
goroutine's frames are kept: it is the one that panicked."""

from __future__ import annotations

import re

from model.stacktrace.model import Exception_, Frame, Trace, in_app, to_int

_GOROUTINE = re.compile(r"^goroutine \d+ \[.*\]:\s*$")
_FUNCTION = re.compile(r"^(?:created by )?(?P<fn>\S+?)(?:\([^()]*\))?(?: in goroutine \d+)?\s*$")
_FILE = re.compile(r"^\s+(?P<path>\S.*?):(?P<line>\d+)(?: \+0x[0-9a-fA-F]+)?\s*$")
_PANIC = re.compile(r"^(?:panic|fatal error): (?P<value>.*?)(?: \[recovered\])?\s*$")


def package(function: str) -> str:
    """`github.com/a/b.(*T).M` -> `github.com/a/b`: the part up to the first `.` after
    the last `/`."""
    head, slash, tail = function.rpartition("/")
    return head + slash + tail.split(".", 1)[0]


def standard(pkg: str) -> bool:
    """The standard library's packages have no dot in their first path element."""
    return pkg != "main" and "." not in pkg.split("/", 1)[0]


def parse(text: str) -> Trace | None:
    panic = Exception_("panic", "")
    goroutines = 0
    pending = ""
    for line in text.splitlines():
        if (found := _PANIC.match(line)) and not panic.value:
            panic.type = line.split(":", 1)[0]
            panic.value = found["value"]
        elif _GOROUTINE.match(line):
            goroutines += 1
            if goroutines > 1:
                break
        elif goroutines and (where := _FILE.match(line)) and pending:
            pkg = package(pending)
            panic.frames.append(Frame(
                path=where["path"], function=pending[len(pkg) + 1:] or pending,
                lineno=to_int(where["line"]), module=pkg,
                in_app=in_app(where["path"]) and not standard(pkg)))
            pending = ""
        elif goroutines and (function := _FUNCTION.match(line)):
            pending = function["fn"]
    if not panic.frames:
        return None
    panic.frames.reverse()
    return Trace("go", [panic])
