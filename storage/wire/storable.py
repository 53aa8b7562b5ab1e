"""What the store can hold, declared once from the columns' kinds (storage/rows.py,
which the schema's tables are built from) and checked on every row of the wire form
(storage/wire/batch.py), whatever door and whatever processor the record came through.

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
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, cycle, starmap
from operator import itemgetter
from typing import Any

from storage import rows

NUL = "\x00"
_IS_SET = functools.partial(operator.is_not, None)  # in C
REPLACEMENT = "\ufffd"
# The deepest a JSON column's value may nest: SQLite's JSON functions, which the
# queries read these columns with, refuse a document nested deeper than 1000 (since
# SQLite 3.45; 2000 before).
JSON_DEPTH = 1000
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
    ints: tuple[int, ...] = ()  # NOT NULL integer columns, of the widths in `int_format`
    # struct (and array) codes, which refuse a value out of range or not an int: "i" for
    # INTEGER (32 bits), "q" for BIGINT (64 bits).
    int_format: str = ""
    # Nullable integer columns: (position, array code), each value checked unless None.
    optional_ints: tuple[tuple[int, str], ...] = ()
    finite: tuple[int, ...] = ()  # NOT NULL floats
    optional_finite: tuple[int, ...] = ()  # nullable floats
    json: tuple[int, ...] = ()  # JSON text, NOT NULL or not: nesting at most JSON_DEPTH
    blobs: tuple[int, ...] = ()  # NOT NULL bytes
    optional_blobs: tuple[int, ...] = ()  # nullable bytes
    max_bytes: tuple[tuple[int, int], ...] = ()  # (position, declared size)
    plan: _Plan = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "plan", _Plan(self))

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

    def repair(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """The row with NUL in its text replaced by U+FFFD (PostgreSQL's text cannot
        hold NUL; SQLite gets the same, so both stores hold the same data)."""
        positions = set(self.text) | set(self.optional_text)
        return tuple(value.replace(NUL, REPLACEMENT)
                     if i in positions and isinstance(value, str) else value
                     for i, value in enumerate(row))


class _Plan:
    """A Columns' checks as few C passes over a table as can be: every length limit in
    one (VARCHAR and byte sizes, and twice JSON_DEPTH for JSON, past which a text is
    measured), the integers in one struct pack a row. Each pass over a table costs
    about as much whatever its width, and a lone error's batch is three small tables."""

    __slots__ = ("text", "optional_text", "lengths", "limits", "pack", "ints", "optional_ints",
                 "finite", "optional_finite", "blobs", "optional_blobs", "json")

    def __init__(self, columns: Columns) -> None:
        self.text, self.optional_text = _getter(columns.text), _getter(columns.optional_text)
        sized = [*columns.max_len, *columns.max_bytes,
                 *((position, 2 * JSON_DEPTH) for position in columns.json)]
        self.lengths = _getter(tuple(position for position, _ in sized))
        self.limits = tuple(limit for _, limit in sized)
        # One struct pack a row checks every NOT NULL integer's type and range (faster
        # than an array per width once a table has many rows).
        self.pack = struct.Struct("<" + columns.int_format).pack
        self.ints = _getter(columns.ints)
        optional: dict[str, list[int]] = {}
        for position, code in columns.optional_ints:
            optional.setdefault(code, []).append(position)
        self.optional_ints = tuple((code, _getter(tuple(p))) for code, p in optional.items())
        self.finite = _getter(columns.finite)
        self.optional_finite = _getter(columns.optional_finite)
        self.blobs, self.optional_blobs = _getter(columns.blobs), _getter(columns.optional_blobs)
        self.json = _getter(columns.json)


# How to read some columns of a row: an itemgetter, and whether it reads several
# (a tuple) or one; None for no column.
Getter = tuple[Callable[[Any], Any], bool] | None


def _getter(positions: tuple[int, ...]) -> Getter:
    if not positions:
        return None
    return itemgetter(*positions), len(positions) > 1


def _values(rows: Sequence[tuple[Any, ...]], getter: Getter) -> Iterable[Any]:
    """The values a getter reads, row after row."""
    get, several = getter  # type: ignore[misc]
    return chain.from_iterable(map(get, rows)) if several else map(get, rows)


def check(rows: Sequence[tuple[Any, ...]], columns: Columns) -> bool:
    """Raise Unstorable if any row holds a value the store cannot hold (see the
    module); else whether some text holds a NUL, which `Columns.repair` mends.
    Every loop here runs in C, one per kind of check and table: about a microsecond
    for a span's row."""
    if not rows:
        return False
    plan = columns.plan
    try:
        text = "\x01".join(_values(rows, plan.text)) if plan.text else ""
        if plan.optional_text:
            text += "\x01".join(filter(None, _values(rows, plan.optional_text)))
        text.encode()  # a lone surrogate raises
        # length_hint: a value's len, 0 for None (and for a non-text the join refused).
        if plan.lengths and not all(map(operator.le, map(operator.length_hint,
                                                         _values(rows, plan.lengths)),
                                        cycle(plan.limits))):
            _check_lengths(rows, columns)
        if plan.ints:  # out of range or not an int: raises
            get, several = plan.ints
            deque(starmap(plan.pack, map(get, rows)) if several
                  else map(plan.pack, map(get, rows)), maxlen=0)
        for code, getter in plan.optional_ints:
            array(code, filter(_IS_SET, _values(rows, getter)))
        # isfinite takes only numbers: None in a NOT NULL column raises too.
        if plan.finite and not all(map(math.isfinite, _values(rows, plan.finite))):
            raise Unstorable("a number is not finite")
        if plan.optional_finite and not all(map(math.isfinite, filter(
                _IS_SET, _values(rows, plan.optional_finite)))):
            raise Unstorable("a number is not finite")
        if plan.blobs:
            b"".join(_values(rows, plan.blobs))  # anything but bytes raises
        if plan.optional_blobs:
            b"".join(filter(_IS_SET, _values(rows, plan.optional_blobs)))
    except (TypeError, ValueError, OverflowError, struct.error) as exc:
        raise Unstorable(f"{type(exc).__name__}: {exc}") from exc  # UnicodeEncodeError too
    return NUL in text


def _check_lengths(rows: Sequence[tuple[Any, ...]], columns: Columns) -> None:
    """Past one limit: Unstorable if a value is longer than its column's, or a JSON
    text longer than twice JSON_DEPTH nests deeper than that."""
    for position, length in columns.max_len + columns.max_bytes:
        if max(map(operator.length_hint, map(itemgetter(position), rows))) > length:
            raise Unstorable(f"a value of column {position} is longer than {length}")
    if columns.plan.json:
        _check_nesting(filter(None, _values(rows, columns.plan.json)))


def _check_nesting(texts: Iterable[str]) -> None:
    """Unstorable if a JSON text nests deeper than JSON_DEPTH. Each level takes two
    characters, so only a text longer than twice that can, and only one with more
    opening brackets than that is measured. Counted with `count`, a scan in C: a
    `translate` by a table, as before, cost a Sentry event's 8 KB context 100,000
    instructions (str.translate takes its slow path for a dict)."""
    for text in texts:
        if (len(text) > 2 * JSON_DEPTH
                and text.count("[") + text.count("{") > JSON_DEPTH
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
