"""Log records' attributes kept once: the `attributes` JSON column of `logs` goes.

Every stored record's body (its OTLP LogRecord message) has always held its
attributes too; a key=value search now reads them there (storage/logbody.py), so the
column was a second copy, written with every record. Upgrading drops it: on
PostgreSQL a change of the catalogue only (the partitions follow their parent); on
SQLite the table is copied without it (as long as copying the table takes).

Downgrading adds the column back and fills it from each record's body, in chunks, in
Python. Frozen: the attribute reading and the JSON text below are copies of the
application's code as it was when this revision was written (model/otlp_values.py,
storage/jsontext.py, storage/logbody.py's attributes_json); do not edit them to follow
the application.

Revision ID: 0031
Revises: 0032
"""

import base64
import json
import math
from typing import Any

import sqlalchemy as sa
from alembic import op
from opentelemetry.proto.logs.v1 import logs_pb2

revision = "0031"
down_revision = "0032"
branch_labels = None
depends_on = None

CHUNK = 5_000


def upgrade() -> None:
    # Batch mode, as the other migrations drop columns: a plain ALTER TABLE on
    # PostgreSQL, the table copied without the column on SQLite (whatever its version).
    with op.batch_alter_table("logs") as batch:
        batch.drop_column("attributes")


# --- frozen copies (see the module docstring) --------------------------------------

def _any_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which == "double_value":
        number = value.double_value
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        return number
    if which == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return _attributes_of(value.kvlist_value.values)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, which) if which else None


def _attributes_of(pairs: Any) -> dict[str, Any]:
    return {kv.key: _any_value(kv.value) for kv in pairs}


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value


def _attributes_json(body: bytes) -> str:
    """The column as it was written: the body's attributes as compact JSON, a NUL
    written U+FFFD (PostgreSQL's json cannot give \\u0000 as text); {} for a body
    that cannot be read."""
    try:
        attributes = _attributes_of(logs_pb2.LogRecord.FromString(body).attributes)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError, RecursionError
        attributes = {}
    text = json.dumps(attributes, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    if "\\u0000" in text:
        text = json.dumps(_without_nul(attributes), separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False)
    return text


def downgrade() -> None:
    op.add_column("logs", sa.Column("attributes", sa.JSON(), nullable=False,
                                    server_default="{}"))
    logs = sa.table("logs", sa.column("project_id"), sa.column("record_key"),
                    sa.column("body"), sa.column("attributes", sa.Text()))
    conn = op.get_bind()
    key = sa.tuple_(logs.c.project_id, logs.c.record_key)
    update = sa.text("UPDATE logs SET attributes = :attributes "
                     "WHERE project_id = :project AND record_key = :key")
    if conn.dialect.name == "postgresql":
        update = sa.text("UPDATE logs SET attributes = CAST(:attributes AS json) "
                         "WHERE project_id = :project AND record_key = :key")
    last: tuple[int, bytes] | None = None
    while True:
        query = sa.select(logs.c.project_id, logs.c.record_key, logs.c.body)
        if last is not None:
            query = query.where(key > sa.tuple_(sa.literal(last[0]),
                                                sa.literal(last[1], sa.LargeBinary)))
        chunk = conn.execute(query.order_by(logs.c.project_id, logs.c.record_key)
                             .limit(CHUNK)).all()
        if not chunk:
            break
        conn.execute(update, [{"attributes": _attributes_json(bytes(body)),
                               "project": project, "key": bytes(record_key)}
                              for project, record_key, body in chunk])
        last = (chunk[-1][0], bytes(chunk[-1][1]))
    if conn.dialect.name == "postgresql":
        op.execute("ALTER TABLE logs ALTER COLUMN attributes DROP DEFAULT")
