"""Sentry's typed attributes, `{"name": {"type": "integer", "value": 42}}`: how the
attribute-based items (streamed spans, logs, trace metrics; receiver/sentry/span_stream.py,
logs.py, trace_metrics.py) read them into plain values, one rule for all three. Pure;
never raises."""

from __future__ import annotations

import math
from typing import Any


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def plain_attributes(raw: Any) -> dict[str, Any]:
    """The attributes' values read by their types (typed_value); a bare value where a
    typed one belongs is taken as it is, an attribute without a value left out."""
    values: dict[str, Any] = {}
    for key, typed in _dict(raw).items():
        value = typed_value(typed) if isinstance(typed, dict) else typed
        if isinstance(key, str) and value is not None:
            values[key] = value
    return values


def typed_value(typed: dict[str, Any]) -> Any:
    """One typed attribute's value, `{"type": ..., "value": v}`, read as its type says.

    Sentry's span v2 attributes have five types: string, boolean, integer, double and
    array (of one scalar type). A value of its type is kept as it is. A value the type
    reads without loss is read as the type: an integer sent as decimal text ("42": a
    64-bit id an SDK quoted) or as an integral float (5.0) is that integer; an integer
    or a number's text sent as a double is that double (so that one attribute is one
    OTLP type on every span, 1 and 1.5 alike); "true" and "false" sent as a boolean are
    booleans. Any other value is kept as the value it is rather than dropped, as Relay
    drops it: Relay's own code calls that removal a stop-gap of its storage, and on a
    trace page what the SDK said is worth more than what it declared. So an array of
    mixed scalars (@sentry/node sends one as `array`) is kept, as OTLP's arrays can
    hold it; an unknown type's value is kept as it is. span_attributes.attribute_value
    then bounds it (an integer beyond 64 bits becomes its text). A `unit` is not kept:
    an OTLP attribute has no unit, and the unit belongs to the attribute's definition
    (Sentry's conventions), not to each value."""
    value = typed.get("value")
    kind = typed.get("type")
    if value is None or kind == "string":  # the common case, first
        return value
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        return value
    read = reader(value)
    return value if read is None else read


def _integer(value: Any) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, float) and value.is_integer() and -(2**63) <= value < 2**63:
        return int(value)
    if isinstance(value, str):
        digits = value.strip()
        if 0 < len(digits) <= 20 and digits.lstrip("+-").isdecimal() and digits.isascii():
            number = int(digits)
            return number if -(2**63) <= number < 2**63 else None
    return None


def _double(value: Any) -> float | None:
    if type(value) is float:
        return value
    if type(value) is int or (isinstance(value, str) and 0 < len(value) <= 64):
        try:
            number = float(value)
        except (ValueError, OverflowError):
            return None
        return number if math.isfinite(number) else None
    return None


def _boolean(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return {"true": True, "false": False}.get(value) if isinstance(value, str) else None


def _array(value: Any) -> list[Any] | None:
    return value if isinstance(value, list) else None


_READERS = {"integer": _integer, "double": _double, "boolean": _boolean, "array": _array}
