"""Compact spans: ids as bytes, attributes and events in an OTLP body, resources once.

Stored spans are carried over: each old row's JSON attributes and events become
its body, its resource a row of `resources`. The conversion runs in Python, in
chunks, inside the migration's transaction.

Revision ID: 0003
Revises: 0002
"""

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

CHUNK = 5_000
COMMON = ("project_id", "name", "kind", "start_ns", "end_ns", "status_code", "status_message",
          "service_name", "scope_name", "category")


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


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
    from sounding.records import Span
    from storage import spanbody
    from storage.jsontext import dumps

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
            text = dumps(_json(row["resource_attributes"]) or {})
            resource = spanbody.resource_id(row["project_id"], text)
            if resource not in seen:
                seen.add(resource)
                new_resources.append({"id": resource, "project_id": row["project_id"],
                                      "attributes": json.loads(text)})
            record = Span(row["trace_id"], row["span_id"], row["parent_span_id"], row["name"],
                          row["kind"], row["start_ns"], row["end_ns"], row["status_code"],
                          row["status_message"], row["service_name"], row["scope_name"], {},
                          _json(row["attributes"]) or {}, _json(row["events"]) or [])
            out.append({**{c: row[c] for c in COMMON},
                        "trace_id": bytes.fromhex(row["trace_id"]),
                        "span_id": bytes.fromhex(row["span_id"]),
                        "parent_span_id": bytes.fromhex(row["parent_span_id"]),
                        "resource_id": resource, "body": spanbody.encode(record)})
        if new_resources:
            conn.execute(resources.insert(), new_resources)
        conn.execute(new_spans.insert(), out)
    op.drop_table('spans_0002')


def downgrade() -> None:
    from processors.classify import semantic_fields
    from storage import spanbody

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
            attributes, events = spanbody.decode(row["body"])
            out.append({**{c: row[c] for c in COMMON},
                        "trace_id": bytes(row["trace_id"]).hex(),
                        "span_id": bytes(row["span_id"]).hex(),
                        "parent_span_id": bytes(row["parent_span_id"]).hex(),
                        "resource_attributes": resources.get(row["resource_id"], {}),
                        "attributes": attributes, "semantic": semantic_fields(attributes),
                        "events": events})
        conn.execute(old_spans.insert(), out)
    op.drop_table('spans_0003')
    op.drop_table('resources')
