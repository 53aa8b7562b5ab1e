"""Field checks shared by the JSON decoders. Each check appends a problem naming
the field instead of raising, so that a 400 lists every problem at once."""

from __future__ import annotations

import math
import re
from math import isfinite
from typing import Any, NamedTuple

from model.timeutil import MAX_US, RANGE_TEXT, TimeOutOfRange, parse_iso8601_us

# Free-form JSON (an error's params) nests at most this many arrays and objects, so
# that every page and API can show it (docs/sending-data.md, "Limits").
MAX_VALUE_DEPTH = 16

HEX = re.compile(r"[0-9a-f]*")


class SecondsNanos(NamedTuple):
    """A google.protobuf.Timestamp as the gRPC services receive it (receiver/
    grpc_messages.py): checked by the same time rule as an ISO 8601 string."""

    seconds: int
    nanos: int


class Problems:
    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.items: list[dict[str, str]] = []

    def add(self, field: str, problem: str) -> None:
        self.items.append({"field": f"{self.prefix}{field}", "error": problem})

    def __bool__(self) -> bool:
        return bool(self.items)


def string(obj: dict[str, Any], name: str, problems: Problems, *, required: bool = False,
           non_empty: bool = False, max_len: int | None = None) -> str | None:
    value = obj.get(name)
    if value is None:
        if required:
            problems.add(name, "is required")
        return None
    if not isinstance(value, str):
        problems.add(name, f"must be a string, got {type_name(value)}")
        return None
    if (non_empty or required) and not value.strip():
        problems.add(name, "must not be empty")
        return None
    if max_len is not None and len(value) > max_len:
        problems.add(name, f"must be at most {max_len} characters, got {len(value)}")
        return None
    return value


def string_list(obj: dict[str, Any], name: str, problems: Problems, *,
                required: bool = False) -> list[str] | None:
    value = obj.get(name)
    if value is None:
        if required:
            problems.add(name, "is required")
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        problems.add(name, "must be an array of strings")
        return None
    return value


def string_map(obj: dict[str, Any], name: str, problems: Problems, *, max_keys: int,
               max_key: int, max_value: int) -> dict[str, str] | None:
    """An object of string values (an error's tags), None when absent or empty. Keys
    and values must be non-empty strings within their lengths: a number or a boolean
    is refused, not turned into text, so that what is stored is what was meant."""
    value = obj_field(obj, name, problems)
    if not value:
        return None
    if len(value) > max_keys:
        problems.add(name, f"must hold at most {max_keys} keys, got {len(value)}")
        return None
    found = len(problems.items)
    for key, item in value.items():
        shown = f"{name}.{key[:64]}"
        if not key.strip() or len(key) > max_key:
            problems.add(shown, f"keys must be 1 to {max_key} characters, got {len(key)}")
        elif not isinstance(item, str):
            problems.add(shown, f"must be a string, got {type_name(item)}")
        elif not item or len(item) > max_value:
            problems.add(shown, f"must be 1 to {max_value} characters, got {len(item)}")
    return None if len(problems.items) > found else value


def integer(obj: dict[str, Any], name: str, problems: Problems, *, required: bool = False,
            minimum: int | None = None, maximum: int | None = None) -> int | None:
    value = obj.get(name)
    if value is None:
        if required:
            problems.add(name, "is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        problems.add(name, f"must be an integer, got {type_name(value)}")
        return None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        problems.add(name, f"must be between {minimum} and {maximum}, got {value}")
        return None
    return value


def number(obj: dict[str, Any], name: str, problems: Problems, *, required: bool = False,
           minimum: float = 0.0, maximum: float = math.inf) -> float | None:
    value = obj.get(name)
    if value is None:
        if required:
            problems.add(name, "is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.add(name, f"must be a number, got {type_name(value)}")
        return None
    if not math.isfinite(value):  # 1e400 in JSON; NaN over gRPC
        problems.add(name, f"must be a finite number, got {value}")
        return None
    if value < minimum:
        problems.add(name, f"must be at least {minimum}, got {value}")
        return None
    if value > maximum:
        problems.add(name, f"must be at most {maximum}, got {value}")
        return None
    return float(value)


def obj_field(obj: dict[str, Any], name: str, problems: Problems) -> dict[str, Any] | None:
    value = obj.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        problems.add(name, f"must be a JSON object, got {type_name(value)}")
        return None
    return value


def free_object(obj: dict[str, Any], name: str, problems: Problems) -> dict[str, Any] | None:
    """A JSON object of any shape (an error's params), within MAX_VALUE_DEPTH and with
    finite numbers only (a body's 1e400 reads as infinity, which JSON cannot carry)."""
    value = obj_field(obj, name, problems)
    if value is None:
        return None
    problem = value_problem(value)
    if problem is not None:
        problems.add(name, problem)
        return None
    return value


def value_problem(value: Any, max_depth: int = MAX_VALUE_DEPTH) -> str | None:
    """Why the parsed JSON `value` cannot be stored and shown, or None: nested deeper
    than `max_depth` arrays and objects, or a number that is not finite. Level by
    level, without recursion, so any depth is measured safely."""
    level: list[Any] = [value]
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return f"nested deeper than {max_depth} levels"
        inner: list[Any] = []
        for container in level:
            for item in container.values() if type(container) is dict else container:
                kind = type(item)
                if kind is dict or kind is list:
                    inner.append(item)
                elif kind is float and not isfinite(item):
                    return f"must hold finite numbers only, got {item}"
        level = inner
    return None


def timestamp_us(obj: dict[str, Any], name: str, problems: Problems, default: int) -> int:
    value = obj.get(name)
    if value is None:
        return default
    if isinstance(value, SecondsNanos):
        return _seconds_nanos_us(value, name, problems, default)
    if not isinstance(value, str):
        problems.add(name, f"must be an ISO 8601 string, got {type_name(value)}")
        return default
    try:
        return parse_iso8601_us(value)
    except TimeOutOfRange:
        problems.add(name, f"must be between {RANGE_TEXT}, got {value[:64]!r}")
    except ValueError:
        problems.add(name, f"is not an ISO 8601 timestamp: {value[:64]!r}")
    return default


def _seconds_nanos_us(value: SecondsNanos, name: str, problems: Problems, default: int) -> int:
    seconds, nanos = value
    if not 0 <= nanos < 1_000_000_000:
        problems.add(name, f"nanos must be between 0 and 999999999, got {nanos}")
        return default
    ts_us = seconds * 1_000_000 + nanos // 1000
    if not 0 <= ts_us <= MAX_US:
        problems.add(name, f"must be between {RANGE_TEXT}, got seconds={seconds}")
        return default
    return ts_us


def hex_id(obj: dict[str, Any], name: str, problems: Problems, length: int) -> str | None:
    value = string(obj, name, problems, max_len=length)
    if value is None:
        return None
    value = value.lower()
    if len(value) != length or not HEX.fullmatch(value) or value == "0" * length:
        problems.add(name, f"must be {length} hexadecimal characters, not all zero")
        return None
    return value


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)
