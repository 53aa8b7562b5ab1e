"""What every language's parser returns: frames and the exception chain of one
text stack trace, in Sentry's order (frames outermost first, root cause first), so
that the dashboard draws them with the partials it has for Sentry events."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from model.fingerprint import library_frame

CAUSE = "cause"  # the older exception is the direct cause of the newer one
CONTEXT = "__context__"  # the newer one was raised while handling the older one


@dataclass(frozen=True)
class Frame:
    path: str
    function: str
    lineno: int | None = None
    colno: int | None = None
    module: str = ""  # class, package or namespace, when the language prints one
    in_app: bool = True
    source: str = ""  # the code line, when the language prints it (Python)


@dataclass
class Exception_:
    type: str
    value: str
    frames: list[Frame] = field(default_factory=list)  # outermost first
    relation: str | None = None  # how this one led to the next (newer) one


@dataclass(frozen=True)
class Trace:
    language: str
    exceptions: list[Exception_]  # root cause first, the exception raised last

    @property
    def frame_count(self) -> int:
        return sum(len(e.frames) for e in self.exceptions)


_TYPE_VALUE = re.compile(r"^\s*(?P<type>[\w$.<>`+\[\]-]+?)(?::\s?(?P<value>.*))?$", re.DOTALL)


def type_and_value(line: str) -> tuple[str, str]:
    """`Type: message` (or a bare `Type`) split; a line that is no such thing is all
    message."""
    found = _TYPE_VALUE.match(line.strip())
    if found is None:
        return "", line.strip()
    return found["type"], (found["value"] or "").strip()


def in_app(where: str, *library_prefixes: str, function: str = "") -> bool:
    """Not a library frame: the shared path rule (model/fingerprint.py), plus the
    language's own namespaces, which its traces name instead of paths."""
    return not library_frame(where) and not function.startswith(library_prefixes or ("\0",))


def to_int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and len(text) < 10 else None
