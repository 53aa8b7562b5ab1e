"""The one JSON parse of every JSON door: bytes in, plain Python values out, or
InvalidInput naming the body.

Rules (docs/sending-data.md, "Limits"):
- The body nests at most MAX_DEPTH arrays and objects. The C parser takes about
  990 levels and then raises RecursionError (refused too); a cheap bound on the
  bytes spares shallow bodies the exact measure, so nothing downstream recurses
  without bound and an ordinary body pays about a tenth of its parse for it.
- `NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259) and are refused.
- Invalid UTF-8 and lone surrogates (a `\\ud800` escape without its pair) become
  U+FFFD, as Go's encoding/json and so the OpenTelemetry Collector read them: the
  item is kept, and no stage, store or page ever sees a string it cannot encode.

Two parsers, one result. orjson reads an ordinary body (UTF-8, no byte order
mark) in about half the standard library's time, and refuses what is not strict
JSON without recursing. Whatever it refuses (NaN, 1e400, a lone surrogate,
invalid UTF-8, a BOM) is read again by the standard library, whose answer is the
one given: a precise 400, or the value with U+FFFD in place of what was invalid.
One difference is left, and harmless: orjson reads an integer beyond 64 bits as a
float, which every field holding an integer refuses as the standard library's
int would be refused, as out of range.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from model.errors import InvalidInput

MAX_DEPTH = 128

# Every byte but brackets and quotes, deleted by bytes.translate (C speed).
_NOT_STRUCTURE = bytes(i for i in range(256) if i not in b'[]{}"')
# A \uD800-\uDFFF escape: only then can json.loads produce a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
_STRING_PASSES = 1  # bracket pairs removed before strings must be empty
_SMALL = 8192
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _refuse(problem: str) -> InvalidInput:
    return InvalidInput("the body is not valid JSON", [{"field": "body", "error": problem}])


def surely_shallow(body: bytes) -> bool:
    """True only when the UTF-8 JSON `body` nests at most MAX_DEPTH levels; False
    when it may nest deeper (then `depth_of` measures the parsed value).

    All in C, about a tenth of the parse's own cost. Escaped backslashes and quotes
    go first; then everything but brackets and quotes. Adjacent bracket pairs are
    removed once: empty arrays and objects, and the `{id}` of a route inside a
    string. If every string is then empty (each `"` pairs with the next), the
    brackets left are the body's structure, less at most two levels, and their
    depth is bounded by removing innermost pairs a pass at a time (one pass of the
    two replaces removes at most two levels). A string still holding brackets
    could fake or hide depth: then the exact measure decides.
    """
    if len(body) <= _SMALL and len(body) - len(body.translate(None, b"[{")) <= MAX_DEPTH:
        return True  # too few opening brackets to nest deeper
    if b"\\" in body:
        body = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    rest = body.translate(None, _NOT_STRUCTURE)
    for _ in range(_STRING_PASSES):
        rest = rest.replace(b"[]", b"").replace(b"{}", b"")
    # Left to right, `""` pairs each string's quotes only if no string holds a
    # bracket: a bracket between two quotes leaves an odd run of quotes.
    if rest.count(b'"') != 2 * rest.count(b'""'):
        return False
    rest = rest.translate(None, b'"')
    levels = 2 * _STRING_PASSES
    while rest:
        levels += 2
        if levels > MAX_DEPTH:
            return False
        shorter = rest.replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(rest):
            return False  # unbalanced: not JSON, which the parser has said already
        rest = shorter
    return True


def depth_of(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a parsed JSON value (a scalar is 0), measured level by
    level without recursion; stops counting past `limit`."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level and depth <= limit:
        depth += 1
        inner = []
        for container in level:
            for item in container.values() if type(container) is dict else container:
                kind = type(item)
                if kind is dict or kind is list:
                    inner.append(item)
        level = inner
    return depth


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (RFC 8259); send a number or a string")


# Built once: json.loads with any keyword builds a new decoder on every call.
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def _repair(value: Any) -> Any:
    """`value` with every lone surrogate in its strings and keys replaced."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        return [_repair(item) for item in value]
    if isinstance(value, dict):
        return {_repair(k): _repair(v) for k, v in value.items()}
    return value


def _encoding(body: bytes) -> str:
    # json.detect_encoding costs more than the rest for a small body; it is needed
    # only for a byte order mark or UTF-16/32, which put a BOM or NUL up front.
    if b"\x00" in body[:4] or body.startswith(_BOMS):
        return json.detect_encoding(body)
    return "utf-8"


def parse_json(body: bytes, bounded: bool = False) -> Any:
    """`bounded`: the caller reads the value only within bounds of its own and never
    recurses past them (a Sentry event, receiver/sentry/event.py: every free-form
    part is cut at 8 levels, `extra` measured without recursion). Then orjson's own
    limit (it refuses past 1,024 levels; the standard library's parse, which takes
    what orjson refuses, still refuses past MAX_DEPTH) is the body's, and the scan of
    its bytes, which cost a 12 KB event as much as its parse, is not made."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _parse_exactly(body)
    if not bounded and not surely_shallow(body) and depth_of(value) > MAX_DEPTH:
        raise _refuse(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _parse_exactly(body: bytes) -> Any:
    # What json.loads(bytes) does, but with "replace" where it uses "surrogatepass",
    # so that raw CESU-8 surrogates (ED A0 80) and other invalid bytes become U+FFFD.
    encoding = _encoding(body)
    text = body.decode(encoding, "replace")
    try:
        value = _DECODER.decode(text)
    except RecursionError as exc:  # about 990 levels: the C parser's own limit
        raise _refuse(f"nested deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:
        raise _refuse(str(exc)) from exc
    shallow = encoding.startswith("utf-8") and surely_shallow(body)
    if not shallow and depth_of(value) > MAX_DEPTH:
        raise _refuse(f"nested deeper than {MAX_DEPTH} levels")
    # No backslash (a memchr away), no escape: most bodies skip the search.
    if b"\\" in body and _SURROGATE_ESCAPE.search(text):
        value = _repair(value)
    return value
