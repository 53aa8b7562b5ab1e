"""What a span's stored body (an OTLP Span message, storage/spanbody.py) must hold
in its bytes for attribute terms to match, as a condition the database checks
(SQLite's instr, PostgreSQL's position on bytea): bodies that cannot match never
leave the database, and only the rest are decoded (storage/queries/trace_search.py).

Every condition is necessary, never sufficient: an attribute's key is in the
bytes as UTF-8, and a value is there either as the text a string has or as the
bytes protobuf writes for the other kinds a term's text can stand for
(trace_terms.attr_text): a boolean, a 64-bit integer, a double, base64 bytes.
Values only a list or map could read as are not looked for.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Boolean, ColumnElement, LargeBinary, and_, bindparam, or_, true
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from storage.queries.trace_terms import AttrEquals, AttrExists, Term

_INT64 = 1 << 63
_INTEGER = re.compile(r"-?[0-9]+")


class _Contains(FunctionElement[bool]):
    type = Boolean()
    inherit_cache = True
    name = "bytes_contain"


@compiles(_Contains)
def _generic(element: _Contains, compiler: Any, **kw: Any) -> str:
    haystack, needle = list(element.clauses)
    return (f"instr({compiler.process(haystack, **kw)}, "
            f"{compiler.process(needle, **kw)}) > 0")


@compiles(_Contains, "postgresql")
def _postgresql(element: _Contains, compiler: Any, **kw: Any) -> str:
    haystack, needle = list(element.clauses)
    return (f"position({compiler.process(needle, **kw)} in "
            f"{compiler.process(haystack, **kw)}) > 0")


def contains(column: ColumnElement[Any], needle: bytes) -> ColumnElement[bool]:
    """Whether the bytes of `column` hold `needle`."""
    return _Contains(column, bindparam(None, needle, type_=LargeBinary()))


def may_match(body: ColumnElement[Any], terms: Sequence[Term]) -> ColumnElement[bool]:
    """A condition every body that matches all `terms` meets."""
    conditions: list[ColumnElement[bool]] = []
    for term in terms:
        if isinstance(term, AttrEquals | AttrExists):
            conditions.append(contains(body, term.key.encode()))
        if isinstance(term, AttrEquals):
            forms = value_forms(term.value)
            if forms:
                conditions.append(or_(*[contains(body, f) for f in forms]))
    return and_(true(), *conditions)


def value_forms(text: str) -> list[bytes]:
    """The bytes, one of which an attribute value reading as `text` has in a body;
    [] when it cannot be said (a list, a map, NaN and the like: no condition)."""
    if text in ("None", "NaN", "Infinity", "-Infinity") or text[:1] in ("[", "{"):
        return []
    forms = [text.encode()]  # a string
    if text in ("true", "false"):
        forms.append(b"\x10" + (b"\x01" if text == "true" else b"\x00"))  # bool_value
    if _INTEGER.fullmatch(text) and str(int(text)) == text and -_INT64 <= int(text) < _INT64:
        forms.append(b"\x18" + _varint(int(text) % (1 << 64)))  # int_value
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if math.isfinite(number) and repr(number) == text:
        forms.append(b"\x21" + struct.pack("<d", number))  # double_value
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raw = None
    if raw is not None and base64.b64encode(raw).decode() == text:
        forms.append(raw)  # bytes_value, shown as base64
    return forms


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)
