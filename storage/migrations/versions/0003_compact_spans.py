"""Compact spans: ids as bytes, attributes and events in an OTLP body, resources once.

Stored spans are carried over: each old row's JSON attributes and events become
its body, its resource a row of `resources`. The conversion runs in Python, in
chunks, inside the migration's transaction.

Frozen: the body encoding, the resource id, the JSON text and the semantic fields
below are copies of the application's code as it was when this revision was
written (storage/spanbody.py, model/otlp_values.py, storage/jsontext.py,
processors/classify.py). A migration must turn the same old rows into the same new
ones for ever; importing live code would let a later change to that code rewrite
history. Do not edit them to follow the application.

Revision ID: 0003
Revises: 0002
"""

import base64
import hashlib
import json
import math
from typing import Any

import sqlalchemy as sa
from alembic import op
from opentelemetry.proto.trace.v1 import trace_pb2

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

CHUNK = 5_000
COMMON = ("project_id", "name", "kind", "start_ns", "end_ns", "status_code", "status_message",
          "service_name", "scope_name", "category")


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


# --- frozen copies (see the module docstring) --------------------------------------

_INT64 = range(-(2**63), 2**63)
# protobuf reads no message nested deeper than 100: such a value is refused, not
# stored unreadable.
_MAX_MESSAGE_DEPTH = 100
_SEMANTIC_FIELDS: dict[str, tuple[str, ...]] = {
    "http.request.method": ("http.request.method", "http.method"),
    "http.response.status_code": ("http.response.status_code", "http.status_code"),
    "url.full": ("url.full", "http.url"),
    "http.route": ("http.route",),
    "url.path": ("url.path", "http.target"),
    "db.system.name": ("db.system.name", "db.system"),
    "db.query.text": ("db.query.text", "db.statement"),
    "db.operation.name": ("db.operation.name", "db.operation"),
    "messaging.system": ("messaging.system",),
    "messaging.destination.name": ("messaging.destination.name",),
}


def _dumps(value: Any) -> str:
    """storage/jsontext.py's compact JSON text: the resource id hashes it."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _resource_id(project_id: int, attributes_json: str) -> int:
    digest = hashlib.blake2b(b"%d\n%s" % (project_id, attributes_json.encode()),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def _fill_any_value(target: Any, value: Any, depth: int) -> None:
    """`depth`: how deep `target` sits (3 for a span's attribute: Span, KeyValue,
    AnyValue)."""
    if value is None:
        return
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
    elif isinstance(value, dict | list | tuple):
        if depth + (3 if isinstance(value, dict) else 2) > _MAX_MESSAGE_DEPTH:
            raise ValueError(f"attribute values nest deeper than {_MAX_MESSAGE_DEPTH}")
        if isinstance(value, dict):
            target.kvlist_value.SetInParent()
            _fill_key_values(target.kvlist_value.values, value, depth + 3)
        else:
            target.array_value.SetInParent()
            for item in value:
                _fill_any_value(target.array_value.values.add(), item, depth + 2)
    elif isinstance(value, bytes):
        target.bytes_value = value
    else:
        target.string_value = str(value)


def _fill_key_values(target: Any, attributes: dict[str, Any], depth: int = 3) -> None:
    for key, value in attributes.items():
        kv = target.add()
        kv.key = str(key)
        _fill_any_value(kv.value, value, depth)


def _encode_body(attributes: dict[str, Any], events: list[dict[str, Any]]) -> bytes:
    out = trace_pb2.Span()
    _fill_key_values(out.attributes, attributes)
    for event in events:
        added = out.events.add()
        added.name = str(event.get("name") or "")
        added.time_unix_nano = int(event.get("time_unix_nano") or 0)
        _fill_key_values(added.attributes, event.get("attributes") or {}, depth=4)
    return out.SerializeToString()  # type: ignore[no-any-return]


def _any_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which == "double_value":
        double = value.double_value
        if math.isnan(double):
            return "NaN"
        if math.isinf(double):
            return "Infinity" if double > 0 else "-Infinity"
        return double
    if which == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return _attributes_of(value.kvlist_value.values)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    if which is None:
        return None
    return getattr(value, which)  # string, bool, int


def _attributes_of(pairs: Any) -> dict[str, Any]:
    return {kv.key: _any_value(kv.value) for kv in pairs}


def _decode_body(body: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    message = trace_pb2.Span.FromString(body)
    events = [{"name": e.name, "time_unix_nano": e.time_unix_nano,
               "attributes": _attributes_of(e.attributes)} for e in message.events]
    return _attributes_of(message.attributes), events


def _semantic_fields(attributes: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for current, names in _SEMANTIC_FIELDS.items():
        for name in names:
            value = attributes.get(name)
            if value is not None:
                found[current] = value
                break
    return found

# --- end of the frozen copies ------------------------------------------------------


def _create_new() -> None:
    op.create_table('resources',
    sa.Column('id', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('attributes', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('spans',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('trace_id', sa.LargeBinary(length=16), nullable=False),
    sa.Column('span_id', sa.LargeBinary(length=8), nullable=False),
    sa.Column('parent_span_id', sa.LargeBinary(length=8), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('kind', sa.Integer(), nullable=False),
    sa.Column('start_ns', sa.BigInteger(), nullable=False),
    sa.Column('end_ns', sa.BigInteger(), nullable=False),
    sa.Column('status_code', sa.Integer(), nullable=False),
    sa.Column('status_message', sa.Text(), nullable=False),
    sa.Column('service_name', sa.Text(), nullable=False),
    sa.Column('scope_name', sa.Text(), nullable=False),
    sa.Column('category', sa.String(length=16), nullable=False),
    sa.Column('resource_id', sa.BigInteger(), nullable=False),
    sa.Column('body', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'trace_id', 'span_id')
    )
    op.create_index('ix_spans_project_start', 'spans', ['project_id', 'start_ns'], unique=False)


def _create_old(name: str) -> None:
    op.create_table(name,
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('trace_id', sa.String(length=32), nullable=False),
    sa.Column('span_id', sa.String(length=16), nullable=False),
    sa.Column('parent_span_id', sa.String(length=16), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('kind', sa.Integer(), nullable=False),
    sa.Column('start_ns', sa.BigInteger(), nullable=False),
    sa.Column('end_ns', sa.BigInteger(), nullable=False),
    sa.Column('status_code', sa.Integer(), nullable=False),
    sa.Column('status_message', sa.Text(), nullable=False),
    sa.Column('service_name', sa.Text(), nullable=False),
    sa.Column('scope_name', sa.Text(), nullable=False),
    sa.Column('category', sa.String(length=16), nullable=False),
    sa.Column('resource_attributes', sa.JSON(), nullable=False),
    sa.Column('attributes', sa.JSON(), nullable=False),
    sa.Column('semantic', sa.JSON(), nullable=False),
    sa.Column('events', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'trace_id', 'span_id')
    )


def _chunks(conn: Any, table: str) -> Any:
    # Keyset pagination over the primary key: one pass, bounded memory.
    last: tuple[Any, ...] | None = None
    while True:
        where = "" if last is None else \
            "WHERE (project_id, trace_id, span_id) > (:p, :t, :s) "
        params = {} if last is None else {"p": last[0], "t": last[1], "s": last[2]}
        rows = conn.execute(sa.text(
            f"SELECT * FROM {table} {where}ORDER BY project_id, trace_id, span_id "
            f"LIMIT {CHUNK}"), params).mappings().all()
        if not rows:
            return
        yield rows
        last = (rows[-1]["project_id"], rows[-1]["trace_id"], rows[-1]["span_id"])


def upgrade() -> None:
    conn = op.get_bind()
    op.drop_index('ix_spans_project_start', table_name='spans')
    op.rename_table('spans', 'spans_0002')
    _create_new()
    new_spans = sa.table('spans', *(sa.column(c) for c in (
        *COMMON, "trace_id", "span_id", "parent_span_id", "resource_id", "body")))
    resources = sa.table('resources', sa.column('id'), sa.column('project_id'),
                         sa.column('attributes', sa.JSON()))
    seen: set[int] = set()
    for rows in _chunks(conn, "spans_0002"):
        out, new_resources = [], []
        for row in rows:
            text = _dumps(_json(row["resource_attributes"]) or {})
            resource = _resource_id(row["project_id"], text)
            if resource not in seen:
                seen.add(resource)
                new_resources.append({"id": resource, "project_id": row["project_id"],
                                      "attributes": json.loads(text)})
            out.append({**{c: row[c] for c in COMMON},
                        "trace_id": bytes.fromhex(row["trace_id"]),
                        "span_id": bytes.fromhex(row["span_id"]),
                        "parent_span_id": bytes.fromhex(row["parent_span_id"]),
                        "resource_id": resource,
                        "body": _encode_body(_json(row["attributes"]) or {},
                                             _json(row["events"]) or [])})
        if new_resources:
            conn.execute(resources.insert(), new_resources)
        conn.execute(new_spans.insert(), out)
    op.drop_table('spans_0002')


def downgrade() -> None:
    conn = op.get_bind()
    op.drop_index('ix_spans_project_start', table_name='spans')
    op.rename_table('spans', 'spans_0003')
    _create_old('spans')
    op.create_index('ix_spans_project_start', 'spans', ['project_id', 'start_ns'], unique=False)
    old_spans = sa.table('spans', *(sa.column(c) for c in (
        *COMMON, "trace_id", "span_id", "parent_span_id")), *(sa.column(c, sa.JSON()) for c in (
        "resource_attributes", "attributes", "semantic", "events")))
    resources = {r.id: _json(r.attributes) for r in conn.execute(
        sa.text("SELECT id, attributes FROM resources"))}
    for rows in _chunks(conn, "spans_0003"):
        out = []
        for row in rows:
            attributes, events = _decode_body(row["body"])
            out.append({**{c: row[c] for c in COMMON},
                        "trace_id": bytes(row["trace_id"]).hex(),
                        "span_id": bytes(row["span_id"]).hex(),
                        "parent_span_id": bytes(row["parent_span_id"]).hex(),
                        "resource_attributes": resources.get(row["resource_id"], {}),
                        "attributes": attributes, "semantic": _semantic_fields(attributes),
                        "events": events})
        conn.execute(old_spans.insert(), out)
    op.drop_table('spans_0003')
    op.drop_table('resources')
