"""Traces from the `spans` table: search, and one trace's spans.

The two public functions are the whole contract the dashboard relies on; a change
of how spans are stored only has to keep them:

- `search(store, project_id, start_ns, end_ns, service=, name=, min_duration_ns=,
  status=, limit=)` -> list[TraceSummary], newest first;
- `get_trace(store, project_id, trace_id, limit=)` -> list[SpanDetail], by start time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from sqlalchemy import ColumnElement, Text, and_, case, cast, func, select

from storage import schema, spanbody
from storage.queries.values import UNREADABLE, load
from storage.store import Store

_S = schema.spans
_R = schema.resources
# OTLP status codes, and the names the search takes for them.
STATUS_CODES = {"unset": 0, "ok": 1, "error": 2}
INT64_MAX = 2**63 - 1
# How many matching spans are read to fill one page of distinct traces.
SCAN_FACTOR = 4


@dataclass(frozen=True)
class TraceSummary:
    trace_id: str
    start_ns: int
    duration_ns: int  # from the first span's start to the last span's end
    span_count: int
    error_count: int  # spans with status ERROR
    services: list[str]
    root_name: str | None  # None when the root span has not (yet) arrived
    root_service: str | None
    matched_name: str  # the newest matching span's name


@dataclass(frozen=True)
class SpanDetail:
    span_id: str
    parent_span_id: str  # "" for a root span
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str
    service_name: str
    scope_name: str
    category: str  # http, database, search, messaging or custom
    attributes: dict[str, Any]
    resource_attributes: dict[str, Any]
    events: list[dict[str, Any]]
    # Stored parts that could not be read ("attributes", "events": a body that does not
    # parse; "resource"): each is shown empty and named here.
    unreadable: list[str] = field(default_factory=list)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def search(store: Store, project_id: int, start_ns: int, end_ns: int, *,
           service: str | None = None, name: str | None = None,
           min_duration_ns: int | None = None, status: str | None = None,
           limit: int = 50) -> list[TraceSummary]:
    """Traces with at least one span matching every filter, started in
    [start_ns, end_ns): `service` exact, `name` a case-insensitive substring,
    `min_duration_ns` of that span, `status` one of unset/ok/error."""
    clauses: list[ColumnElement[bool]] = [
        _S.c.project_id == project_id, _S.c.start_ns >= start_ns, _S.c.start_ns < end_ns]
    if service:
        clauses.append(_S.c.service_name == service)
    if name:
        clauses.append(_S.c.name.ilike(f"%{_escape_like(name)}%", escape="\\"))
    if min_duration_ns:
        # start + d, computed only where it fits in 64 bits (a stored end or start may
        # be any 64-bit value: end - start can overflow, and PostgreSQL refuses that).
        # CASE is evaluated lazily; a span starting later cannot last d anyway.
        clauses.append(case((_S.c.start_ns <= INT64_MAX - min_duration_ns,
                             _S.c.start_ns + min_duration_ns), else_=None) <= _S.c.end_ns)
    if status:
        if status not in STATUS_CODES:
            raise ValueError(f"status must be one of {', '.join(STATUS_CODES)}")
        clauses.append(_S.c.status_code == STATUS_CODES[status])
    with store.reader.connect() as conn:
        # Walk the time index backwards and stop after enough matches: the newest
        # traces come first without reading the whole range.
        matches = conn.execute(
            select(_S.c.trace_id, _S.c.name).where(and_(*clauses))
            .order_by(_S.c.start_ns.desc()).limit(limit * SCAN_FACTOR)).all()
        order: dict[bytes, str] = {}
        for trace_id, span_name in matches:
            trace_id = bytes(trace_id)  # PostgreSQL's driver returns a memoryview
            if trace_id not in order:
                order[trace_id] = span_name
                if len(order) == limit:
                    break
        if not order:
            return []
        ids = list(order)
        in_traces = and_(_S.c.project_id == project_id, _S.c.trace_id.in_(ids))
        stats = {bytes(r.trace_id): r for r in conn.execute(
            select(_S.c.trace_id, func.count().label("n"),
                   func.min(_S.c.start_ns).label("start"), func.max(_S.c.end_ns).label("end"),
                   func.sum(case((_S.c.status_code == STATUS_CODES["error"], 1), else_=0))
                   .label("errors"))
            .where(in_traces).group_by(_S.c.trace_id))}
        roots = {bytes(r.trace_id): r for r in conn.execute(
            select(_S.c.trace_id, _S.c.name, _S.c.service_name)
            .where(and_(in_traces, _S.c.parent_span_id == b"")))}
        services: dict[bytes, set[str]] = {}
        for trace_id, service_name in conn.execute(
                select(_S.c.trace_id, _S.c.service_name).where(in_traces)
                .group_by(_S.c.trace_id, _S.c.service_name)):
            services.setdefault(bytes(trace_id), set()).add(service_name)
    out = []
    for trace_id in ids:
        s = stats[trace_id]
        root = roots.get(trace_id)
        out.append(TraceSummary(
            trace_id=trace_id.hex(), start_ns=int(s.start), duration_ns=int(s.end) - int(s.start),
            span_count=int(s.n), error_count=int(s.errors or 0),
            services=sorted(services.get(trace_id, ())),
            root_name=root.name if root else None,
            root_service=root.service_name if root else None,
            matched_name=order[trace_id]))
    return out


def get_trace(store: Store, project_id: int, trace_id: str, limit: int = 10_000
              ) -> list[SpanDetail]:
    """Every span of one trace (up to `limit`), by start time; [] when unknown."""
    try:
        key = bytes.fromhex(trace_id)
    except ValueError:
        return []
    with store.reader.connect() as conn:
        # Sorted here, not in SQL: an ORDER BY start_ns tempts SQLite into walking the
        # project's whole time index instead of the primary key on (project, trace).
        rows = sorted(conn.execute(
            select(_S).where(and_(_S.c.project_id == project_id, _S.c.trace_id == key))
            .limit(limit)).all(), key=lambda r: (r.start_ns, bytes(r.span_id)))
        wanted = {r.resource_id for r in rows}
        resources = {r.id: load(r.attributes) for r in conn.execute(
            select(_R.c.id, cast(_R.c.attributes, Text).label("attributes"))
            .where(_R.c.id.in_(wanted)))} if wanted else {}
    out = []
    for r in rows:
        unreadable = []
        # A body that parses is at most 100 message levels deep (protobuf's limit) and
        # its doubles are JSON-safe (sounding/otlp_values.py): showable as it is.
        try:
            attributes, events = spanbody.decode(bytes(r.body))
        except DecodeError:
            # Beyond protobuf's nesting limit, or not a Span at all: show the span's
            # columns, and say that its body cannot be read.
            attributes, events = {}, []
            unreadable += ["attributes", "events"]
        resource = resources.get(r.resource_id)
        if resource is UNREADABLE or (resource is not None and not isinstance(resource, dict)):
            resource = {}
            unreadable.append("resource")
        out.append(SpanDetail(
            bytes(r.span_id).hex(), bytes(r.parent_span_id).hex(), r.name, int(r.kind),
            int(r.start_ns), int(r.end_ns), int(r.status_code), r.status_message,
            r.service_name, r.scope_name, r.category, attributes, resource or {}, events,
            unreadable))
    return out
