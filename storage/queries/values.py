"""Stored values as the dashboard can show them, whatever the store holds.

Rows may have been written by an older version or by a plugin: JSON text that does
not parse, nesting far past what any page can draw, numbers JSON cannot carry. The
read side never fails on them (docs/api.md, docs/dashboard.md):

- a value nested deeper than MAX_DEPTH is cut there, the cut replaced by a string
  saying so (deeper values cannot be shown, and would exhaust the stack of the
  JSON encoder and of `dataclasses.asdict`);
- NaN and ±infinity (also a number like 1e400, which reads as infinity) become the
  strings "NaN", "Infinity" and "-Infinity", as OTLP/JSON writes such doubles;
- JSON text that cannot be read at all is reported as unreadable (`load` answers
  UNREADABLE) and shown as such.
"""

from __future__ import annotations

import json
from typing import Any, Final

from model.otlp_values import json_safe_double

# The doors refuse more than 16 levels; rows of older versions may hold more.
MAX_DEPTH = 32
TOO_DEEP = f"[nested deeper than {MAX_DEPTH} levels: not shown]"


class _Unreadable:
    def __repr__(self) -> str:
        return "UNREADABLE"


UNREADABLE: Final = _Unreadable()


def load(raw: Any) -> Any:
    """A JSON column's stored text (or None) as a showable value; UNREADABLE when it
    cannot be parsed. Columns are read as text (`sqlalchemy.cast(column, Text)`) so
    that this is the only parser that ever sees them."""
    if raw is None:
        return None
    if not isinstance(raw, str):  # a driver that parsed it already
        return showable(raw)
    try:
        return showable(json.loads(raw))
    except (ValueError, RecursionError):
        # RecursionError: nesting deeper than the parser's own stack allows.
        return UNREADABLE


def showable(value: Any, depth: int = 0) -> Any:
    """`value` with non-finite floats named and nesting cut at MAX_DEPTH. Recursion is
    bounded by MAX_DEPTH, whatever the input."""
    if isinstance(value, float):
        return json_safe_double(value)
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        return {str(k): showable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if depth >= MAX_DEPTH:
            return TOO_DEEP
        return [showable(v, depth + 1) for v in value]
    return value


def finite(value: Any) -> Any:
    """`value` with every non-finite float named, at any depth: for documents composed
    of values already made `showable` (so of bounded depth), such as the read API's
    answers, where a float computed from stored numbers may still be infinite."""
    if isinstance(value, float):
        return json_safe_double(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def escape_like(text: str) -> str:
    """`text` as a LIKE pattern's literal part (with ESCAPE '\\'): a user's `%` or `_`
    matches itself, not any run or any character."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
