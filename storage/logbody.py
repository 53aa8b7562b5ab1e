"""A log record's stored body and key: the record as an OTLP `LogRecord` message.

The columns of the `logs` table hold what is searched and listed (times, severity,
ids, service, the body as text); the body holds the whole record, so that nothing
OTLP carries is lost: the attributes, the body's value type (a string, a map,
bytes...), dropped_attributes_count, flags and whatever a later OTLP adds. As
for spans (storage/spanbody.py), a record no pipeline stage looked into is stored
as the bytes it came in; one whose attributes or body a stage read (and may have
changed) is written again from its values. On reading, the columns win over the
same fields in the body.

The attributes are kept in the body only (until migration 0031 they were also a JSON
column, half of the wire form's cost per record): a key=value search looks for the
attribute's encoded bytes in the body (`attribute_patterns`).

The record key is what makes a retried request harmless: it hashes the record's
resource, scope and encoded message, so the same record sent twice is one row
(inserted with ON CONFLICT DO NOTHING), and a record has a stable id for the API.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.logs.v1 import logs_pb2

from model.otlp_encode import fill_log, log_columns
from model.otlp_values import any_value, attributes_of, fill_any_value
from model.records import LogRecord
from storage.jsontext import dumps


def encode(record: LogRecord) -> bytes:
    """The record as OTLP LogRecord bytes (model/otlp_encode.py). ValueError for
    values nested deeper than protobuf reads back (only a processor can make those)."""
    if record.otlp is not None and record.untouched:
        return record.otlp_bytes()
    out = logs_pb2.LogRecord()
    fill_log(out, record)
    if record.otlp is None:
        # A record built by hand (a processor's, a test's) has no message: its
        # columns are its fields. Otherwise the columns win on reading.
        log_columns(out, record)
    return out.SerializeToString()


def body_text(value: Any) -> str:
    """The body as text for search: a string as it is, "" when unset, else its JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return dumps(value)


def key_prefix(resource_id: int, scope_name: str) -> bytes:
    """What the record key hashes before the record: the resource and the scope, the
    scope length-prefixed so that no scope name and record can pass for another pair."""
    scope = scope_name.encode("utf-8", "surrogatepass")
    return b"%d\n%d\n%b" % (resource_id, len(scope), scope)


def record_key(prefix: bytes, body: bytes) -> bytes:
    """16 bytes of blake2b over (resource, scope, the encoded record): `prefix` is
    key_prefix(resource id, scope name), `body` the record's encode()."""
    return hashlib.blake2b(prefix + body, digest_size=16).digest()


# LogRecord.attributes is field 6, length-delimited: the tag byte of each attribute.
_ATTRIBUTE_TAG = b"\x32"
_NOT_JSON_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN and the infinities: read below


def _readings(text: str) -> list[Any]:
    """Every attribute value that reads as `text` (otlp_values.any_value, then JSON as
    the attributes column wrote it): the string itself; a number, boolean, list or map
    whose JSON text it is; a double that JSON cannot carry by the name it is read as;
    bytes whose base64 text it is."""
    out: list[Any] = [text]
    try:
        parsed = json.loads(text, parse_constant=_not_json)
    except ValueError:
        parsed = None
    if parsed is not None and not isinstance(parsed, str) and dumps(parsed) == text:
        out.append(parsed)
    if text in _NOT_JSON_DOUBLES:
        out.append(_NOT_JSON_DOUBLES[text])
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raw = None
    if raw is not None and base64.b64encode(raw).decode() == text:
        out.append(raw)
    return out


def attribute_patterns(key: str, text: str) -> list[bytes]:
    """The bytes of a body whose record has the attribute `key` reading as `text` (a
    string as it is, a number as JSON writes it, a boolean as true or false, bytes as
    base64) holds one of: the attribute as it is encoded in a LogRecord, tag and
    length included, so that the same pair nested in a map value or inside another
    field does not match. Protobuf encoders write a message's fields in order with
    minimal lengths (the Collector's, the SDKs', upb), and a record a stage changed is
    encoded here, so a stored attribute is these bytes. Only a string or bytes value
    that itself holds an encoded attribute, control bytes included, can match where
    the record has no such attribute: a sender can make its own records match, no
    one else's."""
    out: list[bytes] = []
    for value in _readings(text):
        try:
            pair = KeyValue(key=key)
        except ValueError:  # not UTF-8 (a lone surrogate): no stored key is
            return []
        if isinstance(value, bytes):
            pair.value.bytes_value = value
        else:
            try:
                fill_any_value(pair.value, value)
            except ValueError:  # not UTF-8, or nested deeper than protobuf reads: no
                continue  # stored value is
        data = pair.SerializeToString()
        pattern = _ATTRIBUTE_TAG + _varint(len(data)) + data
        if pattern not in out:
            out.append(pattern)
    return out


def decode(body: bytes) -> logs_pb2.LogRecord:
    return logs_pb2.LogRecord.FromString(body)


def body_value(message: logs_pb2.LogRecord) -> Any:
    """The body of a stored record as a Python value (None when unset)."""
    return any_value(message.body) if message.HasField("body") else None


def attributes(message: logs_pb2.LogRecord) -> dict[str, Any]:
    return attributes_of(message.attributes)
