"""Log records from the `logs` table, read back with every field.

The small contract the read API and the pages build on:

- `COLUMNS`: the columns a query selects so that `log_rows` can read its rows;
- `log_rows(conn, rows)` -> list[dict]: each selected row as a dict of plain,
  JSON-safe values (see `log_dict`), resources looked up in one query;
- `logs_of_trace(conn, project_id, trace_id, limit=)` -> the trace's records, oldest
  first (a trace's waterfall, the trace endpoint).

`conn` is an open SQLAlchemy connection (`store.reader.connect()`), so that a caller
reading a trace's spans and logs uses one connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.message import DecodeError
from sqlalchemy import Connection, Row, Text, and_, cast, select

from storage import logbody, schema
from storage.queries.values import load

_L = schema.logs
_R = schema.resources
COLUMNS = (_L.c.record_key, _L.c.time_ns, _L.c.observed_ns, _L.c.severity_number,
           _L.c.severity_text, _L.c.trace_id, _L.c.span_id, _L.c.flags, _L.c.event_name,
           _L.c.service_name, _L.c.scope_name, _L.c.resource_id, _L.c.body)
MAX_TRACE_LOGS = 1_000


def log_dict(row: Row[Any], resource: dict[str, Any] | None) -> dict[str, Any]:
    """One stored record. Keys: `id` (the record key, hex: stable, for URLs),
    `time_ns` (its time, or its observed time when it had none), `observed_ns`,
    `severity_number`, `severity_text`, `body` (the typed value: str, int, float,
    bool, list, dict, base64 text for bytes, None when unset), `attributes`,
    `resource` (attributes of its resource), `service_name`, `scope_name`,
    `trace_id` and `span_id` (hex, "" when none), `flags`, `event_name`,
    `dropped_attributes_count`, and `unreadable`: the stored parts that could not be
    read ("body": then body and attributes are empty; "resource"), shown empty."""
    unreadable = []
    try:
        message = logbody.decode(bytes(row.body))
        body, attributes = logbody.body_value(message), logbody.attributes(message)
        dropped = message.dropped_attributes_count
    except (DecodeError, ValueError, RecursionError):
        body, attributes, dropped = None, {}, 0
        unreadable.append("body")
    if resource is None:
        resource = {}
        unreadable.append("resource")
    return {
        "id": bytes(row.record_key).hex(),
        "time_ns": row.time_ns,
        "observed_ns": row.observed_ns,
        "severity_number": row.severity_number,
        "severity_text": row.severity_text,
        "body": body,
        "attributes": attributes,
        "resource": resource,
        "service_name": row.service_name,
        "scope_name": row.scope_name,
        "trace_id": bytes(row.trace_id).hex(),  # PostgreSQL's driver gives memoryviews
        "span_id": bytes(row.span_id).hex(),
        "flags": row.flags,
        "event_name": row.event_name,
        "dropped_attributes_count": dropped,
        "unreadable": unreadable,
    }


def log_rows(conn: Connection, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Rows selected with COLUMNS (in any order, more columns allowed) as dicts."""
    ids = {row.resource_id for row in rows}
    resources: dict[int, dict[str, Any] | None] = {}
    if ids:
        for rid, attributes in conn.execute(
                select(_R.c.id, cast(_R.c.attributes, Text)).where(_R.c.id.in_(ids))):
            value = load(attributes)
            resources[rid] = value if isinstance(value, dict) else None
    return [log_dict(row, resources.get(row.resource_id)) for row in rows]


def logs_of_trace(conn: Connection, project_id: int, trace_id: str,
                  limit: int = MAX_TRACE_LOGS) -> list[dict[str, Any]]:
    """The trace's log records (`trace_id` in hex), oldest first, at most `limit`."""
    try:
        key = bytes.fromhex(trace_id)
    except ValueError:
        return []
    if len(key) != 16:
        return []
    # Sorted here, not in SQL, as storage/queries/traces.py does: an ORDER BY time_ns
    # tempts SQLite into walking the project's time index instead of the trace's.
    rows = sorted(conn.execute(
        select(*COLUMNS).where(and_(_L.c.project_id == project_id, _L.c.trace_id == key))
        .limit(limit)).all(), key=lambda r: (r.time_ns, bytes(r.record_key)))
    return log_rows(conn, rows)
