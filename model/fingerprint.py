"""Sounding's grouping rule: the fingerprint of an error that came without one.

OpenTelemetry SDKs send no fingerprint, and a Sentry event's `fingerprint` may ask
for this rule with `{{ default }}`; both reach the same function, so that one bug
reported by a span event, a log record or a Sentry SDK lands in one group.

The fingerprint is the SHA-256 (first 32 hex characters) of three
parts, each normalised (see `normalise`):
  1. the exception type without its module or package (the part after the last
     `.`: a Python SDK names it `module.Class` on a span event, `Class` in a log
     record);
  2. the top stack frame of the application: in a Python traceback the last
     `File "...", line N, in f` line (Python prints the innermost frame last); in
     any other trace the first line that looks like a frame (`at ...` for Java,
     JavaScript and .NET, `file:line` for Ruby, Go and most others); frames of
     installed packages, the standard library and the runtime (`library_frame`) are
     passed over, as a Sentry SDK marks them not in-app, unless every frame is one;
     empty when there is none;
  3. the message, with one pair of surrounding quotes dropped (a KeyError's message
     is `'k'` on a span event and `k` in a log record).
Normalising replaces UUIDs with `<id>`, hexadecimal (0x-prefixed, or a run of at
least 8 hex digits with a digit in it) with `<hex>` and every other number with
`<n>`, then collapses whitespace. So `User 42 not found` and `User 97 not found`
share a group, and a deploy that moves the failing line does not split one.

A Sentry event gives frames, not text: its decoder renders the innermost in-app
frame as a traceback line of its platform (`frame_fingerprint`), so that the rule
reads the same frame it would read in the text.

A sender may ask for its own fingerprint: a Sentry event's `fingerprint` array of
parts (`with_parts`), where `{{ default }}` stands for the rule above. A door puts what
it read on the record (`Grouping`); the grouping processor alone turns it into the
record's fingerprint (`decide`), for every door.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

MAX_NORMALISED = 1_000

_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                   r"[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b0[xX][0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{8,}\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")
_PYTHON_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
_OTHER_FRAME = re.compile(r"^\s*at\s+\S|^\s*\S+:\d+")
# Paths of code that is not the application's: Python's installed packages and its
# standard library (lib/python3.11/, or Lib\\ on Windows), frozen modules; Node's
# packages and its own internals; Ruby's gems; Go's runtime and module cache.
_LIBRARY = re.compile(
    r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d[\d.]*[/\\]|<frozen |"
    r"[/\\]Lib[/\\]|"
    r"[/\\]node_modules[/\\]|\bnode:|\(internal[/\\]|"
    r"[/\\]gems[/\\]|[/\\]go[/\\]pkg[/\\]mod[/\\]|[/\\]src[/\\]runtime[/\\]")
_QUOTED = re.compile(r"""^(['"])(.*)\1$""", re.DOTALL)


def normalise(text: str) -> str:
    text = _UUID.sub("<id>", text)
    text = _HEX.sub("<hex>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip()[:MAX_NORMALISED]


def library_frame(line: str) -> bool:
    """Whether a traceback line is a frame of an installed package, the language's
    own library or the runtime, rather than of the application: the frames a Sentry
    SDK marks not in-app, told here by their paths alone."""
    return _LIBRARY.search(line) is not None


def top_frame(stacktrace: str | list[str]) -> str:
    """The innermost frame of the application (not `library_frame`), or the innermost
    frame when every frame is a library's; of a trace as printed, or its lines."""
    lines = stacktrace.splitlines() if isinstance(stacktrace, str) else stacktrace
    python = [line for line in lines if _PYTHON_FRAME.match(line)]
    if python:
        own = [line for line in python if not library_frame(line)]
        return (own or python)[-1].strip()
    # The first line of most traces repeats the type and message ("Error: boom");
    # it is skipped unless it is a frame itself (a Ruby trace starts with one).
    frames = [line.strip() for line in lines if _OTHER_FRAME.match(line)]
    return next((line for line in frames if not library_frame(line)),
                frames[0] if frames else "")


def short_type(exception_type: str) -> str:
    """The type without its module or package: the part after the last `.`."""
    return exception_type.strip().rsplit(".", 1)[-1]


def unquoted(message: str) -> str:
    """The message with one pair of surrounding quotes dropped."""
    text = message.strip()
    quoted = _QUOTED.match(text)
    return text if quoted is None else quoted.group(2)


def fingerprint(exception_type: str, stacktrace: str, message: str) -> str:
    """The fingerprint of an exception sent as text: its type, its stack trace as
    printed, its message."""
    return frame_fingerprint(exception_type, top_frame(stacktrace), message)


def frame_fingerprint(exception_type: str, frame: str, message: str) -> str:
    """The fingerprint of an exception whose top frame is already known (one line,
    as a traceback prints it; "" when there is none)."""
    # The short type and the unquoted message: the two copies of one Python exception
    # (a span event and a log record) must land in one group.
    parts = (normalise(short_type(exception_type)), normalise(frame),
             normalise(unquoted(message)))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


_DEFAULT_PART = re.compile(r"^\{\{\s*default\s*\}\}$")


def with_parts(parts: list[str], default: str) -> str:
    """The fingerprint a sender asked for with `parts` (strings): `["{{ default }}"]`
    alone is exactly `default`; anything else is the SHA-256 (first 32 hex characters)
    of the parts joined with a newline, each `{{ default }}` (spaces optional) replaced
    by `default` first. No parts: `default`, as Sentry ignores an empty array."""
    if not parts or (len(parts) == 1 and _DEFAULT_PART.match(parts[0])):
        return default
    joined = "\n".join(default if _DEFAULT_PART.match(part) else part for part in parts)
    return hashlib.sha256(joined.encode()).hexdigest()[:32]


@dataclass(slots=True)
class Grouping:
    """What a door read of an error for the grouping rule, as sent."""

    exception_type: str  # "" when the sender named none
    message: str  # what the rule reads: a Sentry message event's template
    # The top frame as one traceback line when the door rendered it from frames ("":
    # none); None: the rule finds it in the record's backtrace.
    frame: str | None = None
    # The fingerprint the sender asked for (see `with_parts`); None: the rule alone.
    parts: list[str] | None = None


def decide(grouping: Grouping, backtrace: list[str]) -> str:
    """The fingerprint of an error whose door read `grouping` (and `backtrace`, the
    record's lines, when the door knew no frame)."""
    frame = top_frame(backtrace) if grouping.frame is None else grouping.frame
    default = frame_fingerprint(grouping.exception_type, frame, grouping.message)
    return default if grouping.parts is None else with_parts(grouping.parts, default)
