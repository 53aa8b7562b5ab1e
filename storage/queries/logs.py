"""Log records from the `logs` table, read back with every field.

The small contract the read API and the pages build on:

- `COLUMNS`: the columns a query selects so that `log_rows` can read its rows;
- `log_rows(conn, rows)` -> list[dict]: each selected row as a dict of plain,
  JSON-safe values (see `log_dict`), resources looked up in one query;
- `logs_of_trace(conn, project_id, trace_id, limit=)` -> the trace's records, oldest
  first (a trace's waterfall, the trace endpoint);
- `search(store, project_id, LogFilter(...), limit=, offset=)` -> LogPage: the Logs
  page and the read API, newest first with the total that matched; with `after` (a
  Cursor), the records that follow it, oldest first, for a live tail that must not
  skip any; `get(store, project_id, record_id)` -> one record or None.

`conn` is an open SQLAlchemy connection (`store.reader.connect()`), so that a caller
reading a trace's spans and logs uses one connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError
from sqlalchemy import (
    ColumnElement,
    Connection,
    LargeBinary,
    Row,
    Text,
    and_,
    cast,
    false,
    func,
    literal,
    or_,
    select,
)

from storage import logbody, schema
from storage.queries.values import escape_like, load
from storage.store import Store

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


# Severity names as OTLP's SeverityNumber ranges start (TRACE=1 .. FATAL=21): a filter
# "at least WARN" is severity_number >= 13, whatever text the sender wrote.
SEVERITIES = {"TRACE": 1, "DEBUG": 5, "INFO": 9, "WARN": 13, "ERROR": 17, "FATAL": 21}
MAX_SEVERITY = 24
# Counting every match of a wide range would read the whole index range on each page
# load (and each poll of a tail): past this, a total reads "at least".
COUNT_CAP = 100_000
MAX_RESOURCES_READ = 5_000


def severity_name(number: int) -> str:
    """The short name of a severity number (INFO, WARN3, ...), "" for 0."""
    base = ""
    for name, start in SEVERITIES.items():
        if number >= start:
            base = name
    if not base or number > MAX_SEVERITY:
        return ""
    step = number - SEVERITIES[base] + 1
    return base if step == 1 else f"{base}{step}"


def parse_severity(raw: str) -> int:
    """A number 0..24, or a name (TRACE, DEBUG, INFO, WARN, ERROR, FATAL; any case;
    WARNING too). ValueError otherwise."""
    text = raw.strip().upper()
    if text == "WARNING":
        text = "WARN"
    if text in SEVERITIES:
        return SEVERITIES[text]
    if text.isdigit() and int(text) <= MAX_SEVERITY:
        return int(text)
    raise ValueError(f"a severity number 0..{MAX_SEVERITY} or one of "
                     f"{', '.join(SEVERITIES)}")


@dataclass(frozen=True)
class Cursor:
    """A place in the (time_ns, record key) order: what follows it is newer. In URLs
    "<time_ns>.<key hex>"; "<time_ns>" alone stands before every record of that time."""

    time_ns: int
    key: bytes = b""

    def text(self) -> str:
        return f"{self.time_ns}.{self.key.hex()}" if self.key else str(self.time_ns)

    @classmethod
    def parse(cls, raw: str) -> Cursor:
        """ValueError when it is not one."""
        time_text, _, key_text = raw.strip().partition(".")
        if not time_text.isascii() or not time_text.isdigit() or len(time_text) > 19:
            raise ValueError("a cursor is <time_ns>.<record key>")
        time_ns = int(time_text)
        key = bytes.fromhex(key_text) if key_text else b""
        if time_ns >= 2**63 or len(key) > 16:
            raise ValueError("a cursor is <time_ns>.<record key>")
        return cls(time_ns, key)


@dataclass(frozen=True)
class LogFilter:
    """What the Logs page and the API filter on; every field is optional."""

    start_ns: int | None = None  # time_ns in [start_ns, end_ns)
    end_ns: int | None = None
    service: str | None = None  # exact
    min_severity: int | None = None  # severity_number >= this
    text: str | None = None  # a case-insensitive substring of the body
    attributes: tuple[tuple[str, str], ...] = ()  # key=value, each must match
    trace_id: str | None = None  # 32 lowercase hex
    after: Cursor | None = None  # only records after it, oldest first


@dataclass(frozen=True)
class LogPage:
    items: list[dict[str, Any]]  # as log_dict makes them
    total: int  # records matching the filters (after the cursor, with one), to COUNT_CAP
    total_exact: bool  # False: at least `total` match (counting stopped at COUNT_CAP)
    limit: int
    offset: int
    # The cursor of the newest record returned, or of the one given: what a tail asks
    # for next. None for a page with neither.
    next_after: str | None


def _body_holds(dialect: str, pattern: bytes) -> ColumnElement[bool]:
    """The stored body holds `pattern`, byte for byte."""
    needle = literal(pattern, LargeBinary)
    if dialect == "postgresql":
        return func.position(needle.op("IN")(_L.c.body)) > 0
    return func.instr(_L.c.body, needle) > 0


def _attribute_matches(dialect: str, key: str, value: str) -> ColumnElement[bool]:
    """The record's attribute `key`, as text, equals `value`: a string as it is, a
    number as JSON writes it, a boolean as true or false (storage/logbody.py's
    attribute_patterns: the attributes are read in the body, where they are kept)."""
    patterns = logbody.attribute_patterns(key, value)
    if not patterns:  # text no record's attribute can hold
        return false()
    return or_(*(_body_holds(dialect, p) for p in patterns))


def _where(store: Store, project_id: int, f: LogFilter) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = [_L.c.project_id == project_id]
    if f.start_ns is not None:
        clauses.append(_L.c.time_ns >= f.start_ns)
    if f.end_ns is not None:
        clauses.append(_L.c.time_ns < f.end_ns)
    if f.service:
        clauses.append(_L.c.service_name == f.service)
    if f.min_severity:
        clauses.append(_L.c.severity_number >= f.min_severity)
    if f.text:
        clauses.append(_L.c.body_text.ilike(f"%{escape_like(f.text)}%", escape="\\"))
    for key, value in f.attributes:
        clauses.append(_attribute_matches(store.dialect, key, value))
    if f.trace_id:
        clauses.append(_L.c.trace_id == bytes.fromhex(f.trace_id))
    if f.after is not None:
        clauses.append(or_(_L.c.time_ns > f.after.time_ns,
                           and_(_L.c.time_ns == f.after.time_ns,
                                _L.c.record_key > f.after.key)))
    return clauses


def search(store: Store, project_id: int, f: LogFilter, limit: int = 50, offset: int = 0
           ) -> LogPage:
    where = and_(*_where(store, project_id, f))
    if f.after is None:
        order = (_L.c.time_ns.desc(), _L.c.record_key.desc())
    else:
        order = (_L.c.time_ns.asc(), _L.c.record_key.asc())
    with store.reader.connect() as conn:
        rows = conn.execute(select(*COLUMNS).where(where).order_by(*order)
                            .limit(limit).offset(offset)).all()
        matches = select(literal(1)).select_from(_L).where(where).limit(COUNT_CAP + 1)
        counted = int(conn.execute(select(func.count()).select_from(matches.subquery()))
                      .scalar_one())
        items = log_rows(conn, rows)
    if f.after is not None:
        next_after: str | None = cursor_of(items[-1]) if items else f.after.text()
    else:
        next_after = cursor_of(items[0]) if items and offset == 0 else None
    return LogPage(items, min(counted, COUNT_CAP), counted <= COUNT_CAP, limit, offset,
                   next_after)


def cursor_of(item: dict[str, Any]) -> str:
    """The cursor (Cursor.text) that a record of log_dict stands at."""
    return f"{item['time_ns']}.{item['id']}"


def get(store: Store, project_id: int, record_id: str) -> dict[str, Any] | None:
    """One record by its id (the record key, hex), or None."""
    try:
        key = bytes.fromhex(record_id)
    except ValueError:
        return None
    with store.reader.connect() as conn:
        rows = conn.execute(select(*COLUMNS).where(
            and_(_L.c.project_id == project_id, _L.c.record_key == key))).all()
        items = log_rows(conn, rows)
    return items[0] if items else None


def services(store: Store, project_id: int, limit: int = 200) -> list[str]:
    """The project's service names, for the filter's suggestions: read from its
    resources (a row per distinct resource, shared with spans), not from the records,
    which may be billions."""
    names: set[str] = set()
    with store.reader.connect() as conn:
        for (attributes,) in conn.execute(
                select(cast(_R.c.attributes, Text)).where(_R.c.project_id == project_id)
                .limit(MAX_RESOURCES_READ)):
            value = load(attributes)
            name = value.get("service.name") if isinstance(value, dict) else None
            if isinstance(name, str) and name:
                names.add(name)
    return sorted(names)[:limit]
