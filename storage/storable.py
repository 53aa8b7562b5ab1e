"""What the store can hold, declared once from the columns' kinds (storage/rows.py,
which the schema's tables are built from) and checked on every row of the wire form
(storage/wire.py), whatever door and whatever processor the record came through.

What a kind can hold, on both stores:
- INT32, INT64: an int within 32 or 64 signed bits (INTEGER, BIGINT);
- FLOAT: a finite float (a NaN or an infinity is not a number the queries can add);
- TEXT: a str that is valid Unicode (no lone surrogate: UTF-8 cannot carry it), and
  at most its VARCHAR length; a NUL (PostgreSQL's text cannot hold it) is mended
  to U+FFFD rather than refused, on both stores alike;
- JSON: its text, as TEXT, nesting at most JSON_DEPTH arrays and objects;
- BYTES: bytes, at most the column's declared size.

Each check runs over a whole table of a batch in C (one join for the text, one
struct pack a row for the integers), so a batch that is fine pays about a
microsecond a record; a batch that is not is encoded again record by record to
find the culprits, which are dropped alone.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import struct
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, starmap
from operator import itemgetter
from typing import Any

from storage import rows

NUL = "\x00"
_IS_SET = functools.partial(operator.is_not, None)  # in C
REPLACEMENT = "\ufffd"
# The deepest a JSON column's value may nest: SQLite's JSON functions, which the
# queries read these columns with, refuse a document nested deeper than 1000.
JSON_DEPTH = 1000
_BRACKETS = str.maketrans("", "", "[{")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NESTING = re.compile(r"[\[\]{}]")


class Unstorable(ValueError):
    """A row holds a value that no store can hold."""


@dataclass(frozen=True, slots=True)
class Columns:
    """The positions of a wire row's columns, by the kind of check they need; built
    from a row form's declaration with `Columns.of`."""

    text: tuple[int, ...] = ()  # NOT NULL text
    optional_text: tuple[int, ...] = ()  # nullable text
    max_len: tuple[tuple[int, int], ...] = ()  # (position, VARCHAR length)
    ints: tuple[int, ...] = ()  # NOT NULL integer columns, packed as `int_format`
    int_format: str = ""  # struct codes: "i" for INTEGER (32 bits), "q" for BIGINT
    # Nullable integer columns: (position, struct code), each value packed unless None.
    optional_ints: tuple[tuple[int, str], ...] = ()
    finite: tuple[int, ...] = ()  # NOT NULL floats
    optional_finite: tuple[int, ...] = ()  # nullable floats
    json: tuple[int, ...] = ()  # JSON text, NOT NULL or not: nesting at most JSON_DEPTH
    blobs: tuple[int, ...] = ()  # NOT NULL bytes
    optional_blobs: tuple[int, ...] = ()  # nullable bytes
    max_bytes: tuple[tuple[int, int], ...] = ()  # (position, declared size)

    @classmethod
    def of(cls, form: rows.RowForm) -> Columns:
        """The checks the wire rows of `form` need, at the positions of its fields.
        JSON is checked as the text it travels as, and for its nesting."""
        def where(*kinds: str, nullable: bool | None = None) -> tuple[int, ...]:
            return tuple(i for i, f in enumerate(form.fields) if f.kind in kinds
                         and (nullable is None or f.nullable == nullable))

        fields = form.fields
        ints = where(rows.INT32, rows.INT64, nullable=False)
        return cls(text=where(rows.TEXT, rows.JSON, nullable=False),
                   optional_text=where(rows.TEXT, rows.JSON, nullable=True),
                   max_len=tuple((i, f.length) for i, f in enumerate(fields)
                                 if f.kind == rows.TEXT and f.length is not None),
                   ints=ints,
                   int_format="".join("i" if fields[i].kind == rows.INT32 else "q"
                                      for i in ints),
                   optional_ints=tuple((i, "i" if fields[i].kind == rows.INT32 else "q")
                                       for i in where(rows.INT32, rows.INT64, nullable=True)),
                   finite=where(rows.FLOAT, nullable=False),
                   optional_finite=where(rows.FLOAT, nullable=True),
                   json=where(rows.JSON),
                   blobs=where(rows.BYTES, nullable=False),
                   optional_blobs=where(rows.BYTES, nullable=True),
                   max_bytes=tuple((i, f.length) for i, f in enumerate(fields)
                                   if f.kind == rows.BYTES and f.length is not None))

    @property
    def packer(self) -> struct.Struct:
        return _packer(self.int_format)

    def repair(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """The row with NUL in its text replaced by U+FFFD (PostgreSQL's text cannot
        hold NUL; SQLite gets the same, so both stores hold the same data)."""
        positions = set(self.text) | set(self.optional_text)
        return tuple(value.replace(NUL, REPLACEMENT)
                     if i in positions and isinstance(value, str) else value
                     for i, value in enumerate(row))


@functools.cache
def _packer(int_format: str) -> struct.Struct:
    return struct.Struct("<" + int_format)


def _column(rows: Sequence[tuple[Any, ...]], positions: tuple[int, ...]) -> Iterable[Any]:
    if len(positions) == 1:
        return map(itemgetter(positions[0]), rows)
    return chain.from_iterable(map(itemgetter(*positions), rows))


def check(rows: Sequence[tuple[Any, ...]], columns: Columns) -> bool:
    """Raise Unstorable if any row holds a value the store cannot hold (see the
    module); else whether some text holds a NUL, which `Columns.repair` mends.
    Every loop here runs in C: about a microsecond for a span's row."""
    if not rows:
        return False
    try:
        text = "\x01".join(_column(rows, columns.text)) if columns.text else ""
        if columns.optional_text:
            text += "\x01".join(filter(None, _column(rows, columns.optional_text)))
        text.encode()  # a lone surrogate raises
        for position, length in columns.max_len + columns.max_bytes:
            if max(map(len, filter(None, map(itemgetter(position), rows))), default=0) > length:
                raise Unstorable(f"a value of column {position} is longer than {length}")
        if columns.blobs:
            b"".join(_column(rows, columns.blobs))  # anything but bytes raises
        if columns.optional_blobs:
            b"".join(filter(_IS_SET, _column(rows, columns.optional_blobs)))
        if columns.json:
            _check_nesting(filter(None, _column(rows, columns.json)))
        if columns.ints:
            # Packing checks each integer's type and range at C speed.
            pack = columns.packer.pack
            values = map(itemgetter(*columns.ints), rows)
            deque(map(pack, values) if len(columns.ints) == 1 else starmap(pack, values),
                  maxlen=0)
        for position, code in columns.optional_ints:
            deque(map(_packer(code).pack, filter(_IS_SET, map(itemgetter(position), rows))),
                  maxlen=0)
        if columns.finite and not math.isfinite(sum(_column(rows, columns.finite))):
            raise Unstorable("a number is not finite")
        if columns.optional_finite and not math.isfinite(sum(
                v for v in _column(rows, columns.optional_finite) if v is not None)):
            raise Unstorable("a number is not finite")
    except (TypeError, ValueError, OverflowError, struct.error) as exc:
        raise Unstorable(f"{type(exc).__name__}: {exc}") from exc  # UnicodeEncodeError too
    return NUL in text


def _check_nesting(texts: Iterable[str]) -> None:
    """Unstorable if a JSON text nests deeper than JSON_DEPTH. Each level takes two
    characters, so only a text longer than twice that can, and only one with more
    opening brackets than that is measured."""
    for text in texts:
        if (len(text) > 2 * JSON_DEPTH
                and len(text) - len(text.translate(_BRACKETS)) > JSON_DEPTH
                and json_depth(text) > JSON_DEPTH):
            raise Unstorable(f"a JSON value nests deeper than {JSON_DEPTH} levels")


def json_depth(text: str) -> int:
    """How deep the JSON `text` nests arrays and objects (brackets in strings aside)."""
    depth = deepest = 0
    for bracket in _NESTING.findall(_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest
