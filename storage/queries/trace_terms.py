"""The trace search's query text, parsed: `key=value`, `key exists` and comparisons
on a span's duration (`duration>250ms`), each term holding on one span.

`parse` is a pure function: the dashboard calls it and turns its ValueError into a
400 naming the bad term; storage/queries/traces.py applies the terms.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

MAX_TERMS = 20
MAX_DURATION_NS = 10 ** 18  # ~31 years: beyond it no span lasts, and start + d fits 64 bits
_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
          "m": 60_000_000_000, "h": 3_600_000_000_000}
_DURATION = re.compile(r"duration\s*(>=|<=|>|<)\s*([0-9]+(?:\.[0-9]+)?)\s*(ns|us|µs|ms|s|m|h)?$")
_COMPARISON = re.compile(r"(>=|<=|>|<)")


@dataclass(frozen=True)
class AttrEquals:
    key: str
    value: str  # compared with the attribute's text (true/false, 12, 1.5, text)


@dataclass(frozen=True)
class AttrExists:
    key: str


@dataclass(frozen=True)
class Duration:
    op: str  # one of > >= < <=
    ns: int


Term = AttrEquals | AttrExists | Duration


def parse(text: str | None) -> list[Term]:
    """The terms of `text`, separated by spaces; a value with spaces is quoted
    (`http.route="/a b"`). ValueError names the first term that cannot be read."""
    if not text or not text.strip():
        return []
    try:
        words = shlex.split(text)
    except ValueError as exc:  # an unclosed quote
        raise ValueError(f"cannot read the query: {exc}") from exc
    terms: list[Term] = []
    i = 0
    while i < len(words):
        word = words[i]
        if i + 1 < len(words) and words[i + 1] == "exists":
            terms.append(AttrExists(_key(word)))
            i += 2
            continue
        terms.append(_term(word))
        i += 1
    if len(terms) > MAX_TERMS:
        raise ValueError(f"at most {MAX_TERMS} terms in a query")
    return terms


def _term(word: str) -> Term:
    if word.startswith("duration"):
        found = _DURATION.match(word)
        if not found:
            raise ValueError(f"cannot read {word!r}: write a duration comparison like "
                             "duration>250ms (units ns, us, ms, s, m, h; ms when none)")
        op, number, unit = found.groups()
        ns = round(float(number) * _UNITS[unit or "ms"])
        if ns > MAX_DURATION_NS:
            raise ValueError(f"{word!r}: the duration is too long")
        return Duration(op, ns)
    if "=" in word:
        key, _, value = word.partition("=")
        return AttrEquals(_key(key), value)
    if _COMPARISON.search(word):
        raise ValueError(f"cannot read {word!r}: only duration can be compared "
                         "(duration>250ms); attributes take key=value or 'key exists'")
    raise ValueError(f"cannot read {word!r}: write key=value, 'key exists' or "
                     "duration>250ms")


def _key(key: str) -> str:
    if not key or any(c in key for c in "=<>") or len(key) > 256:
        raise ValueError(f"{key!r} is not an attribute key")
    return key


def attr_text(value: object) -> str:
    """An attribute's value as a query compares it: booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
