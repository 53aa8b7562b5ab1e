"""Traces from the `spans` table: the shapes the dashboard reads, and one trace's spans.

These functions are the whole contract the dashboard relies on; a change of how spans
are stored only has to keep them:

- `trace_search.search(store, project_id, start_ns, end_ns, service=, name=,
  min_duration_ns=, status=, terms=, limit=, offset=)` -> TracePage (a page of
  TraceSummary, newest first, and the total), in storage/queries/trace_search.py;
- `trace_search.names_in_range(...)` -> the service and span names the form suggests;
- `get_trace(store, project_id, trace_id, limit=)` -> list[SpanDetail], by start time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import DecodeError
from sqlalchemy import Text, and_, cast, select

from storage import schema, spanbody
from storage.queries.values import UNREADABLE, load
from storage.store import Store

_S = schema.spans
_R = schema.resources
# OTLP status codes, and the names the search takes for them.
STATUS_CODES = {"unset": 0, "ok": 1, "error": 2}
INT64_MAX = 2**63 - 1


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
    # Stored parts that could not be read ("attributes", "events", "links": a body that
    # does not parse; "resource"): each is shown empty and named here.
    unreadable: list[str] = field(default_factory=list)
    # The spans this one links to, without being their child (model/records.py's
    # Span.links: trace_id, span_id, trace_state, flags, attributes).
    links: list[dict[str, Any]] = field(default_factory=list)


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
        # its doubles are JSON-safe (model/otlp_values.py): showable as it is.
        try:
            attributes, events, links = spanbody.decode_with_links(bytes(r.body))
        except DecodeError:
            # Beyond protobuf's nesting limit, or not a Span at all: show the span's
            # columns, and say that its body cannot be read.
            attributes, events, links = {}, [], []
            unreadable += ["attributes", "events", "links"]
        resource = resources.get(r.resource_id)
        if resource is UNREADABLE or (resource is not None and not isinstance(resource, dict)):
            resource = {}
            unreadable.append("resource")
        out.append(SpanDetail(
            bytes(r.span_id).hex(), bytes(r.parent_span_id).hex(), r.name, int(r.kind),
            int(r.start_ns), int(r.end_ns), int(r.status_code), r.status_message,
            r.service_name, r.scope_name, r.category, attributes, resource or {}, events,
            unreadable, links))
    return out
