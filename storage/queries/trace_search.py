"""Trace search over the `spans` table: a page of matching traces with their total,
and the names the search form suggests. Every read is bounded by a cap on the spans it
looks at (below); storage/queries/traces.py has the shapes and one trace's spans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError
from sqlalchemy import (
    ColumnElement,
    Connection,
    Subquery,
    and_,
    case,
    func,
    or_,
    select,
    true,
)

from storage import schema, spanbody
from storage.queries.trace_terms import AttrEquals, AttrExists, Duration, Term, attr_text
from storage.queries.traces import INT64_MAX, STATUS_CODES, TraceSummary
from storage.store import Store

_S = schema.spans


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True)
class TracePage:
    items: list[TraceSummary]  # this page, newest first
    total: int  # matching traces among the spans examined
    # The search reached one of its caps (EXAMINE_CAP spans of the range, ATTR_SCAN_CAP
    # bodies): older matches may exist, and `total` is a lower bound.
    capped: bool = False
    examined: int = 0  # spans of the range read, newest first


# A search reads at most the newest EXAMINE_CAP spans of its range, whatever its
# filters: a filter on a column without an index (status, name, duration) or on
# attributes would otherwise read the whole range to count its matches (about 1 s a
# million spans on SQLite). Past the cap the page says so and the total is "N+".
EXAMINE_CAP = 100_000
# With attribute terms, the bodies of at most this many spans that match the other
# filters are decoded, one by one in Python (about 10-20 us each).
ATTR_SCAN_CAP = 20_000
# The form's suggestions come from the newest spans of the range.
NAMES_CAP = 20_000


def search(store: Store, project_id: int, start_ns: int, end_ns: int, *,
           service: str | None = None, name: str | None = None,
           min_duration_ns: int | None = None, status: str | None = None,
           terms: Sequence[Term] = (), limit: int = 50, offset: int = 0) -> TracePage:
    """Traces with at least one span matching every filter, started in
    [start_ns, end_ns): `service` exact, `name` a case-insensitive substring,
    `min_duration_ns` of that span, `status` one of unset/ok/error, and `terms`
    (storage/queries/trace_terms.py). Newest first, `limit` from `offset`."""
    window = _newest(project_id, start_ns, end_ns, EXAMINE_CAP,
                     _S.c.trace_id, _S.c.start_ns, _S.c.end_ns, _S.c.name, _S.c.service_name,
                     _S.c.status_code, *([_S.c.body] if _attr_terms(terms) else []))
    c = window.c
    filters = _filters(c, service, name, status)
    if min_duration_ns:
        filters.append(_duration(c, Duration(">=", min_duration_ns)))
    filters += [_duration(c, t) for t in terms if isinstance(t, Duration)]
    matched = and_(true(), *filters)
    attr_terms = _attr_terms(terms)
    with store.reader.connect() as conn:
        # Counted on the time index alone: cheap, and tells whether the cap was reached.
        examined = int(conn.execute(select(func.count()).select_from(
            _newest(project_id, start_ns, end_ns, EXAMINE_CAP, _S.c.start_ns))).scalar_one())
        capped = examined >= EXAMINE_CAP
        if attr_terms:
            latest, scanned = _scan_attributes(conn, window, matched, attr_terms)
            ordered = sorted(latest.items(), key=lambda kv: (-kv[1][0], kv[0]))
            total = len(ordered)
            page = [(tid, n) for tid, (_, n) in ordered[offset:offset + limit]]
            capped = capped or scanned >= ATTR_SCAN_CAP
        else:
            # One pass over the window: every matching trace's newest start, sorted
            # here (a second pass to count them cost as much as the first).
            found = sorted((-int(r[1]), bytes(r[0]), r[2]) for r in conn.execute(
                select(c.trace_id, func.max(c.start_ns), func.min(c.name)).where(matched)
                .group_by(c.trace_id)))
            total = len(found)
            page = [(tid, n) for _, tid, n in found[offset:offset + limit]]
        items = _summaries(conn, project_id, dict(page)) if page else []
    return TracePage(items, total, capped, examined)


def _attr_terms(terms: Sequence[Term]) -> list[Term]:
    return [t for t in terms if not isinstance(t, Duration)]


def _newest(project_id: int, start_ns: int, end_ns: int, cap: int,
            *columns: ColumnElement[Any]) -> Subquery:
    """The newest `cap` spans started in [start_ns, end_ns): a walk back along the
    (project, start) index that stops at the cap."""
    return (select(*columns).where(_S.c.project_id == project_id, _S.c.start_ns >= start_ns,
                                   _S.c.start_ns < end_ns)
            .order_by(_S.c.start_ns.desc()).limit(cap).subquery())


def _filters(c: Any, service: str | None, name: str | None, status: str | None
             ) -> list[ColumnElement[bool]]:
    filters: list[ColumnElement[bool]] = []
    if service:
        filters.append(c.service_name == service)
    if name:
        filters.append(c.name.ilike(f"%{_escape_like(name)}%", escape="\\"))
    if status:
        if status not in STATUS_CODES:
            raise ValueError(f"status must be one of {', '.join(STATUS_CODES)}")
        filters.append(c.status_code == STATUS_CODES[status])
    return filters


def _duration(c: Any, term: Duration) -> ColumnElement[bool]:
    """The span's end - start compared with term.ns, computed as start + d only where
    that fits in 64 bits (a stored end or start may be any 64-bit value: end - start
    can overflow, and PostgreSQL refuses that). Where start + d does not fit, the span
    is shorter than d. CASE is evaluated lazily."""
    fits = c.start_ns <= INT64_MAX - term.ns
    shifted = case((fits, c.start_ns + term.ns), else_=None)
    if term.op == ">=":
        return shifted <= c.end_ns
    if term.op == ">":
        return shifted < c.end_ns
    if term.op == "<":
        return or_(~fits, shifted > c.end_ns)
    return or_(~fits, shifted >= c.end_ns)


def _scan_attributes(conn: Connection, window: Subquery, matched: ColumnElement[bool],
                     terms: Sequence[Term]) -> tuple[dict[bytes, tuple[int, str]], int]:
    """({trace id: (its newest matching span's start, name)}, bodies looked at): the
    newest ATTR_SCAN_CAP spans of the window that match the columns, decoded where
    their bytes hold every key (a key absent from the bytes is absent from the span)."""
    keys = [t.key.encode() for t in terms if isinstance(t, AttrEquals | AttrExists)]
    latest: dict[bytes, tuple[int, str]] = {}
    scanned = 0
    c = window.c
    # Fetched whole (the reads run in autocommit on PostgreSQL, where a server-side
    # cursor needs a transaction): the cap bounds it to a few megabytes.
    rows = conn.execute(
        select(c.trace_id, c.start_ns, c.name, c.body).where(matched)
        .order_by(c.start_ns.desc()).limit(ATTR_SCAN_CAP))
    for trace_id, start, span_name, body in rows:
        scanned += 1
        body = bytes(body)
        if any(k not in body for k in keys):
            continue
        try:
            attributes, _ = spanbody.decode(body)
        except DecodeError:
            continue
        if all(_holds(t, attributes) for t in terms):
            tid = bytes(trace_id)
            if tid not in latest:  # rows come newest first
                latest[tid] = (int(start), span_name)
    return latest, scanned


def _holds(term: Term, attributes: dict[str, Any]) -> bool:
    if isinstance(term, AttrExists):
        return term.key in attributes
    if isinstance(term, AttrEquals):
        return term.key in attributes and attr_text(attributes[term.key]) == term.value
    return True


def _summaries(conn: Connection, project_id: int, names: dict[bytes, str]
               ) -> list[TraceSummary]:
    """Each trace's figures over all its spans, in the order of `names` (a trace id
    and the name of a span of it that matched)."""
    ids = list(names)
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
            matched_name=names[trace_id]))
    return out


def names_in_range(store: Store, project_id: int, start_ns: int, end_ns: int,
                   service: str | None = None, limit: int = 500
                   ) -> tuple[list[str], list[str]]:
    """(service names, span names of `service` or of all) among the newest NAMES_CAP
    spans of the range: the search form's suggestions, from the spans themselves."""
    newest = _newest(project_id, start_ns, end_ns, NAMES_CAP, _S.c.service_name, _S.c.name)
    with store.reader.connect() as conn:
        services = [r[0] for r in conn.execute(
            select(newest.c.service_name).distinct().order_by(newest.c.service_name)
            .limit(limit))]
        names = select(newest.c.name).distinct().order_by(newest.c.name).limit(limit)
        if service:
            names = names.where(newest.c.service_name == service)
        operations = [r[0] for r in conn.execute(names)]
    return services, operations


