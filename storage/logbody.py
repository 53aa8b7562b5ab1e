"""A log record's stored body and key: the record as an OTLP `LogRecord` message.

The columns of the `logs` table hold what is searched and listed (times, severity,
ids, service, the body as text, the attributes as JSON); the body holds the whole
record, so that nothing OTLP carries is lost: the body's value type (a string, a
map, bytes...), dropped_attributes_count, flags and whatever a later OTLP adds. As
for spans (storage/spanbody.py), a record no pipeline stage looked into is stored
as the bytes it came in; one whose attributes or body a stage read (and may have
changed) is written again from its values. On reading, the columns win over the
same fields in the body.

The record key is what makes a retried request harmless: it hashes the record's
resource, scope and encoded message, so the same record sent twice is one row
(inserted with ON CONFLICT DO NOTHING), and a record has a stable id for the API.
"""

from __future__ import annotations

import hashlib
from typing import Any

from opentelemetry.proto.logs.v1 import logs_pb2

from model.otlp_encode import fill_log, log_columns
from model.otlp_values import any_value, attributes_of
from model.records import LogRecord
from storage.jsontext import dumps


def encode(record: LogRecord) -> bytes:
    """The record as OTLP LogRecord bytes (model/otlp_encode.py). ValueError for
    values nested deeper than protobuf reads back (only a processor can make those)."""
    if record.otlp is not None and record.untouched:
        return record.otlp.SerializeToString()  # type: ignore[no-any-return]
    out = logs_pb2.LogRecord()
    fill_log(out, record)
    if record.otlp is None:
        # A record built by hand (a processor's, a test's) has no message: its
        # columns are its fields. Otherwise the columns win on reading.
        log_columns(out, record)
    return out.SerializeToString()


_ESCAPED_NUL = "\\u0000"  # how JSON text writes a NUL


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


def attributes_json(attributes: dict[str, Any]) -> str:
    """The attributes column: JSON text for key=value search. A NUL in a key or a
    value becomes U+FFFD there, as in every text column (storage/wire/storable.py): a
    PostgreSQL json value holding \u0000 cannot be read as text (->> fails), so one
    such record would break every search over its key. The body keeps the NUL."""
    text = dumps(attributes)
    if _ESCAPED_NUL in text:  # rare; a literal backslash-u0000 is re-checked, harmless
        text = dumps(_without_nul(attributes))
    return text


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


def decode(body: bytes) -> logs_pb2.LogRecord:
    return logs_pb2.LogRecord.FromString(body)


def body_value(message: logs_pb2.LogRecord) -> Any:
    """The body of a stored record as a Python value (None when unset)."""
    return any_value(message.body) if message.HasField("body") else None


def attributes(message: logs_pb2.LogRecord) -> dict[str, Any]:
    return attributes_of(message.attributes)
