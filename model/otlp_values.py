"""OTLP attribute values to Python values and back.

Python values are what processors see in `span.attributes` and what the read API
returns: str, bool, int, float, list, dict and None. Bytes become base64 text, and
a double that JSON cannot carry (NaN, ±infinity) becomes the string OTLP/JSON
writes for it, so every value is JSON-safe.

Going back (`key_values`) is needed only for a span whose attributes were changed
in the pipeline or that arrived as OTLP/JSON: a span that arrived as protobuf and
was not touched is stored in the bytes it came in (see storage/spanbody.py).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

_INT64 = range(-(2**63), 2**63)
# protobuf refuses to parse messages nested deeper than 100 (a span counting as 1):
# a value filled deeper could be stored but never read back, so it is refused.
MAX_MESSAGE_DEPTH = 100


def json_safe_double(value: float) -> Any:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def any_value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return json_safe_double(value.double_value)
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return None


def attributes_of(pairs: Iterable[KeyValue]) -> dict[str, Any]:
    # The hot loop of reading attributes: the common scalar kinds inline.
    out: dict[str, Any] = {}
    for kv in pairs:
        value = kv.value
        which = value.WhichOneof("value")
        if which == "string_value":
            out[kv.key] = value.string_value
        elif which == "int_value" or which == "bool_value":
            out[kv.key] = getattr(value, which)
        else:
            out[kv.key] = any_value(value)
    return out


def links_of(links: Iterable[Any]) -> list[dict[str, Any]]:
    """OTLP Span.Link messages as the dicts `Span.links` holds (model/records.py):
    ids as lowercase hex, "" when unset."""
    return [{"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex(),
             "trace_state": link.trace_state, "flags": link.flags,
             "attributes": attributes_of(link.attributes)} for link in links]


def find_values(pairs: Iterable[KeyValue], wanted: frozenset[str] | set[str]) -> dict[str, Any]:
    """The values of the `wanted` keys only; reading keys is far cheaper than values."""
    out: dict[str, Any] = {}
    for kv in pairs:
        key = kv.key
        if key in wanted:
            out[key] = any_value(kv.value)
    return out


def fill_any_value(target: AnyValue, value: Any, depth: int = 3) -> None:
    """Set `target` to `value`; `depth` is how deep `target` sits in its message
    (3 for a span's attribute: Span, KeyValue, AnyValue). ValueError past
    MAX_MESSAGE_DEPTH."""
    if value is None:
        return  # an unset AnyValue
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        if value in _INT64:
            target.int_value = value
        else:
            target.string_value = str(value)
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, Mapping | list | tuple):
        # A map's values sit three messages below (KeyValueList, KeyValue, AnyValue),
        # a list's two (ArrayValue, AnyValue).
        if depth + (3 if isinstance(value, Mapping) else 2) > MAX_MESSAGE_DEPTH:
            raise ValueError(f"attribute values nest deeper than protobuf reads back "
                             f"({MAX_MESSAGE_DEPTH} messages)")
        if isinstance(value, Mapping):
            target.kvlist_value.SetInParent()  # an empty map stays a map
            fill_key_values(target.kvlist_value.values, value, depth + 3)
        else:
            values = target.array_value.values
            target.array_value.SetInParent()  # an empty list stays a list
            for item in value:
                fill_any_value(values.add(), item, depth + 2)
    elif isinstance(value, bytes):
        target.bytes_value = value
    else:
        target.string_value = str(value)


def fill_key_values(target: Any, attributes: Mapping[str, Any], depth: int = 3) -> None:
    """Append `attributes` to a repeated KeyValue field; `depth` is that of their
    values (see fill_any_value)."""
    for key, value in attributes.items():
        kv = target.add()
        kv.key = str(key)
        fill_any_value(kv.value, value, depth)
