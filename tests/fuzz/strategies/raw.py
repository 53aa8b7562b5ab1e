"""JSON text that `json.dumps` cannot write, and the body's JSON writer.

A JSON body is built as Python values and serialized here, so that it can also hold
what `json.dumps` cannot write: raw tokens (`NaN`, `1e400`, nesting 10,000 deep) and
bytes that are not UTF-8. Such a token is a `Raw` placed anywhere in the tree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Raw:
    """JSON text written as is. `depth` is its nesting; `refusable` marks a token that
    the decided rules let a door refuse with the whole body (NaN, Infinity, nesting
    deeper than the body limit)."""

    text: bytes
    depth: int = 0
    refusable: bool = False


BODY_MAX_DEPTH = 128  # decided: any JSON body nesting deeper is 400
VALUE_MAX_DEPTH = 16  # decided: params and attribute values nest at most this deep


def nested_raw(depth: int, kind: str = "[") -> Raw:
    close = "]" if kind == "[" else "}"
    opener = "[" if kind == "[" else '{"a":'
    inner = "1" if kind == "[" else "1"
    text = opener * depth + inner + close * depth
    return Raw(text.encode(), depth, depth + 8 > BODY_MAX_DEPTH)


RAW_TOKENS = [
    Raw(b"NaN", refusable=True), Raw(b"Infinity", refusable=True),
    Raw(b"-Infinity", refusable=True), Raw(b"1e400", refusable=True),
    Raw(b"-1e400", refusable=True), Raw(b"1e-400"), Raw(b"-0"), Raw(b"1E22"),
    Raw(b"9223372036854775808"), Raw(b"18446744073709551616"), Raw(b"1" + b"0" * 400),
    # Strings that are not UTF-8: CESU-8 surrogates, overlong forms, stray bytes.
    Raw(b'"E\xed\xa0\x80"'), Raw(b'"\xed\xbf\xbf tail"'), Raw(b'"\xc0\xaf"'),
    Raw(b'"\xff\xfe\xfd"'), Raw(b'"caf\xe9"'), Raw(b'"\xf4\x90\x80\x80"'),
    # Escapes: lone surrogates both ways, NUL.
    Raw(b'"\\ud800"'), Raw(b'"x\\udfff"'), Raw(b'"\\udbff\\udbff"'), Raw(b'"\\u0000"'),
]


def dumps(value: Any) -> bytes:
    """JSON text of `value`, with every Raw written as is."""
    raws: list[bytes] = []

    def hold(obj: Any) -> Any:
        if isinstance(obj, Raw):
            raws.append(obj.text)
            return f"\x00raw{len(raws) - 1}\x00"
        raise TypeError(type(obj).__name__)

    text = json.dumps(value, default=hold, allow_nan=True).encode()
    for index, raw in enumerate(raws):
        text = text.replace(f'"\\u0000raw{index}\\u0000"'.encode(), raw, 1)
    return text


def depth_of(value: Any) -> int:
    if isinstance(value, Raw):
        return value.depth
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def refusable(value: Any) -> bool:
    """Whether the decided rules allow refusing the whole body for what it holds."""
    if isinstance(value, Raw):
        return value.refusable
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(refusable(v) for v in value.values())
    if isinstance(value, list):
        return any(refusable(v) for v in value)
    return False
