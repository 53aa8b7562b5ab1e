"""Field checks shared by the JSON decoders. Each check appends a problem naming
the field instead of raising, so that a 400 lists every problem at once."""

from __future__ import annotations

import math
import re
from typing import Any

from sounding.timeutil import parse_iso8601_us

HEX = re.compile(r"[0-9a-f]*")


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
           minimum: float = 0.0) -> float | None:
    value = obj.get(name)
    if value is None:
        if required:
            problems.add(name, "is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.add(name, f"must be a number, got {type_name(value)}")
        return None
    if value < minimum:
        problems.add(name, f"must be at least {minimum}, got {value}")
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


def timestamp_us(obj: dict[str, Any], name: str, problems: Problems, default: int) -> int:
    value = obj.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        problems.add(name, f"must be an ISO 8601 string, got {type_name(value)}")
        return default
    try:
        return parse_iso8601_us(value)
    except ValueError:
        problems.add(name, f"is not an ISO 8601 timestamp: {value[:64]!r}")
        return default


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
