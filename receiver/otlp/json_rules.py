"""OTLP/JSON's reading rules, shared by the decoders of every OTLP signal
(receiver/otlp/decode_traces.py for traces, receiver/otlp/decode_logs.py for logs).

OTLP/JSON is not generic protobuf JSON: trace and span ids are hex (a generic
parser would read them as base64), 64-bit integers come as strings or numbers,
enums as integers (names are accepted too, as the Collector's decoder does),
field names in lowerCamelCase (the proto names are accepted too), unknown fields
are ignored. A record that breaks a rule raises Drop: it is dropped alone and its
reason counted. An envelope (resourceSpans, scopeLogs...) that is not what OTLP
says is InvalidInput: the body is not OTLP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from model.errors import InvalidInput
from model.otlp_values import json_safe_double
from model.timeutil import MAX_NS

_HEX = frozenset("0123456789abcdefABCDEF")
# ASCII only: str.isdigit() and int() also take other scripts' digits, and int()
# takes "1_000" and surrounding spaces, none of which is OTLP/JSON.
_UINT = re.compile(r"[0-9]+")
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
# Attribute values (arrays and key-value lists) nest at most this deep, so that the
# stored body reads back and every page shows it (docs/sending-data.md, "Limits").
MAX_VALUE_DEPTH = 16
# How many reasons for dropped records a 400 or a partial success names.
MAX_DROP_REASONS = 20
_INT32 = range(-(2**31), 2**31)  # enums are int32 in OTLP
# fixed64 in OTLP, and decimal strings up to 2^64 - 1 in OTLP/JSON.
TIME_RANGE = "times must be below 2^63 ns (2262-04-11T23:47:16.854775807Z)"


class Drop(Exception):
    """This record cannot be kept; the rest of the request can."""


@dataclass(slots=True)
class Dropped:
    """What a decoder dropped: how many records, and the first reasons (for the 400
    body and OTLP's partial success). Each signal's decoded request derives from it
    and adds its records, named as in Batch."""

    dropped: int = 0
    reasons: list[str] = field(default_factory=list)

    def drop(self, where: str, reason: str) -> None:
        self.dropped += 1
        if len(self.reasons) < MAX_DROP_REASONS:
            self.reasons.append(f"{where}: {reason}")


def get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def json_integer(value: Any, signed: bool) -> int | None:
    """The integer an OTLP/JSON value writes: a JSON number without a fraction, or a
    decimal string of ASCII digits (as protobuf JSON writes 64-bit integers), with a
    leading minus only when `signed`; None when it writes none (booleans included).
    Each caller checks the range and names the field."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and (_INT if signed else _UINT).fullmatch(value):
        return int(value)
    return None


def time_ns(value: Any, name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise Drop(f"{name} must be an integer")
    number = json_integer(value, signed=False)
    if number is None:
        raise Drop(f"{name} must be an unsigned integer or a decimal string")
    if not 0 <= number <= MAX_NS:
        raise Drop(f"{name}: {TIME_RANGE}")
    return number


def hex_id(value: Any, name: str, nbytes: int, required: bool) -> str:
    zero = "0" * (nbytes * 2)
    if value is None or value == "":
        value = zero  # OTLP/JSON writes an all-zero (unset) id as an empty string
    if not isinstance(value, str) or len(value) != nbytes * 2 or not _HEX.issuperset(value):
        raise Drop(f"{name} must be {nbytes * 2} hexadecimal characters")
    value = value.lower()
    if value == zero:
        if required:
            raise Drop(f"{name} must not be empty or all zero")
        return ""
    return value


def enum(value: Any, enum_type: Any, name: str) -> int:
    """An OTLP enum (int32): a number, or the name `enum_type` gives it."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        if value not in _INT32:
            raise Drop(f"{name} must be a 32-bit integer, got {value}")
        return value
    if isinstance(value, str):
        try:
            return int(enum_type.Value(value))
        except ValueError:
            pass
    raise Drop(f"{name} must be an enum number or name, got {value!r}")


def json_any_value(value: Any, depth: int = 0) -> Any:
    """The Python value of an OTLP/JSON AnyValue; `depth` is how many arrays and
    key-value lists hold it."""
    if not isinstance(value, dict):
        raise Drop("an attribute value must be an AnyValue object")
    for camel, snake in (("stringValue", "string_value"), ("boolValue", "bool_value"),
                         ("intValue", "int_value"), ("doubleValue", "double_value"),
                         ("arrayValue", "array_value"), ("kvlistValue", "kvlist_value"),
                         ("bytesValue", "bytes_value")):
        raw = get(value, camel, snake)
        if raw is None:
            continue
        if camel == "stringValue" and isinstance(raw, str):
            return raw
        if camel == "boolValue" and isinstance(raw, bool):
            return raw
        if camel == "intValue":
            # int64: a JSON number or, as protobuf JSON writes it, a decimal string.
            if isinstance(raw, int) and not isinstance(raw, bool):
                number = raw
            elif isinstance(raw, float) and raw.is_integer():
                number = int(raw)
            elif isinstance(raw, str) and _INT.fullmatch(raw):
                number = int(raw)
            else:
                break
            if not -(2**63) <= number < 2**63:
                break
            return number
        if camel == "doubleValue":
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                return json_safe_double(float(raw))
            if raw in ("NaN", "Infinity", "-Infinity"):
                return raw
            if isinstance(raw, str) and _FLOAT.fullmatch(raw):
                return json_safe_double(float(raw))  # protobuf JSON allows quoted numbers
            break
        if camel in ("arrayValue", "kvlistValue") and depth >= MAX_VALUE_DEPTH:
            raise Drop(f"attribute values nest deeper than {MAX_VALUE_DEPTH} levels")
        if camel == "arrayValue" and isinstance(raw, dict):
            return [json_any_value(v, depth + 1)
                    for v in json_list(raw.get("values"), "arrayValue.values")]
        if camel == "kvlistValue" and isinstance(raw, dict):
            return json_attributes(raw.get("values"), depth + 1)
        if camel == "bytesValue" and isinstance(raw, str):
            return raw  # already base64, the form bytes are stored in
        raise Drop(f"attribute value {camel} has the wrong type")
    if not value:
        return None  # an empty AnyValue is valid OTLP: the value is unset
    raise Drop(f"unreadable attribute value {sorted(value)[:3]}")


def json_list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Drop(f"{name} must be an array")
    return value


def json_attributes(pairs: Any, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in json_list(pairs, "attributes"):
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise Drop("an attribute must be an object with a string key")
        out[pair["key"]] = json_any_value(pair.get("value", {}), depth)
    return out



def envelope_list(obj: dict[str, Any], camel: str, snake: str, where: str) -> list[Any]:
    value = get(obj, camel, snake)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput("the body is not OTLP/JSON",
                           [{"field": f"{where}{camel}", "error": "must be an array"}])
    return value
