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
    Select,
    Subquery,
    and_,
    case,
    func,
    literal_column,
    or_,
    select,
)

from storage import schema, spanbody
from storage.queries.body_match import may_match
from storage.queries.trace_terms import AttrEquals, AttrExists, Duration, Term, attr_text
from storage.queries.traces import INT64_MAX, STATUS_CODES, TraceSummary
from storage.queries.values import escape_like
from storage.store import Store

_S = schema.spans


@dataclass(frozen=True)
class TracePage:
    items: list[TraceSummary]  # this page, newest first
    total: int  # matching traces among the spans examined
    # The search reached one of its caps (EXAMINE_CAP spans of the range, ATTR_SCAN_CAP
    # bodies): older matches may exist, and `total` is a lower bound.
    capped: bool = False
    examined: int = 0  # spans of the range read, newest first


# A search reads at most the newest EXAMINE_CAP spans of its walk: of the range, or
# of the failed spans or the named spans when those filters give it their index. A
# filter without one (duration, attributes, service) would otherwise read the whole
# range to count its matches (about 1 s a million spans on SQLite). Past the cap the
# page says so and the total is "N+".
EXAMINE_CAP = 100_000
# It reads the newest FIRST_WINDOW spans first, and the whole EXAMINE_CAP only when
# those hold fewer than TOTAL_WANTED matching traces (or fewer than the page needs):
# a search most spans pass says "1,000+" after reading a tenth of what it would
# otherwise, and one that few spans pass reads the small window again at worst.
FIRST_WINDOW = 10_000
TOTAL_WANTED = 1_000
# With attribute terms, the bodies of at most this many spans that match the other
# filters and hold every term's key are decoded, one by one in Python (about 10-20 us
# each); the keys are looked for in the bytes by the database.
ATTR_SCAN_CAP = 20_000
# The form's suggestions come from the newest spans of the range.
NAMES_CAP = 20_000
# Spans with status ERROR have an index of their own (ix_spans_project_errors, a
# partial index): the literal must be the index's, not a bound parameter, for SQLite
# to use it.
_FAILED = _S.c.status_code == literal_column(str(STATUS_CODES["error"]))


def search(store: Store, project_id: int, start_ns: int, end_ns: int, *,
           service: str | None = None, name: str | None = None,
           min_duration_ns: int | None = None, status: str | None = None,
           terms: Sequence[Term] = (), limit: int = 50, offset: int = 0) -> TracePage:
    """Traces with at least one span matching every filter, started in
    [start_ns, end_ns): `service` exact, `name` a case-insensitive substring,
    `min_duration_ns` of that span, `status` one of unset/ok/error, and `terms`
    (storage/queries/trace_terms.py). Newest first, `limit` from `offset`.

    `status="error"` reads the failed spans only (their own index): its totals are
    exact over any range up to EXAMINE_CAP such spans. There is no index by name: a
    (project, name, start) one was tried, and with a few hundred operation names
    every commit wrote into a few hundred of its pages, tripling the SQLite
    write-ahead log a commit adds (tests/exporters/sql/test_checkpoint.py caught it)."""
    filters = _filters(status)
    wanted = max(offset + limit, TOTAL_WANTED)
    caps = [EXAMINE_CAP]
    # An attribute scan reads its rows newest first and stops at enough traces
    # itself: a smaller window first would only read them twice.
    if wanted <= TOTAL_WANTED and FIRST_WINDOW < EXAMINE_CAP and not _attr_terms(terms):
        caps.insert(0, FIRST_WINDOW)
    with store.reader.connect() as conn:
        for cap in caps:
            # The walk's extent, counted on its index alone (cheap): how many spans,
            # and the oldest start among them. The window is then every span of the
            # walk from that start on, read where it lies: out of a LIMIT subquery,
            # every row was copied before the filters saw it (twice the time).
            walk = _window(_newest(project_id, start_ns, end_ns, cap, *filters),
                           _S.c.start_ns)
            examined, oldest = conn.execute(
                select(func.count(), func.min(walk.c.start_ns))).one()
            if not examined:
                return TracePage([], 0)
            window = and_(_S.c.project_id == project_id, _S.c.start_ns >= int(oldest),
                          _S.c.start_ns < end_ns, *filters)
            found, scanned = _matches(conn, window, service, name, min_duration_ns, terms,
                                      wanted)
            if len(found) >= wanted or examined < cap:
                break
        capped = examined >= cap or scanned >= ATTR_SCAN_CAP or scanned < 0
        page = found[offset:offset + limit]
        items = _summaries(conn, project_id, dict(page)) if page else []
    return TracePage(items, len(found), capped, examined)


def _attr_terms(terms: Sequence[Term]) -> list[Term]:
    return [t for t in terms if not isinstance(t, Duration)]


def _newest(project_id: int, start_ns: int, end_ns: int, cap: int,
            *where: ColumnElement[bool]) -> Select[Any]:
    """The newest `cap` spans started in [start_ns, end_ns) (and `where`): a walk
    back along the (project, start) index, or the failed spans' index, that stops
    at the cap. Columns are chosen by _window."""
    return (select().where(_S.c.project_id == project_id, _S.c.start_ns >= start_ns,
                           _S.c.start_ns < end_ns, *where)
            .order_by(_S.c.start_ns.desc()).limit(cap))


def _window(newest: Select[Any], *columns: ColumnElement[Any]) -> Subquery:
    return newest.with_only_columns(*columns, maintain_column_froms=False).subquery()


def _matches(conn: Connection, window: ColumnElement[bool], service: str | None,
             name: str | None, min_duration_ns: int | None, terms: Sequence[Term],
             wanted: int) -> tuple[list[tuple[bytes, str]], int]:
    """([(trace id, the name of a span of it that matched)] newest first, bodies
    decoded) among the spans `window` selects; bodies decoded is -1 when the scan
    stopped at `wanted` traces before the end of the window."""
    c = _S.c
    matched = and_(window, *_column_filters(c, service, name))
    if min_duration_ns:
        matched = and_(matched, _duration(c, Duration(">=", min_duration_ns)))
    for t in terms:
        if isinstance(t, Duration):
            matched = and_(matched, _duration(c, t))
    attr_terms = _attr_terms(terms)
    if attr_terms:
        latest, scanned = _scan_attributes(conn, matched, attr_terms, wanted)
        ordered = sorted(latest.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return [(tid, n) for tid, (_, n) in ordered], scanned
    # One pass over the window: every matching trace's newest start, sorted here (a
    # second pass to count them cost as much as the first).
    found = sorted((-int(r[1]), bytes(r[0]), r[2]) for r in conn.execute(
        select(c.trace_id, func.max(c.start_ns), func.min(c.name)).where(matched)
        .group_by(c.trace_id)))
    return [(tid, n) for _, tid, n in found], 0


def _filters(status: str | None) -> list[ColumnElement[bool]]:
    """What narrows the walk itself: the failed spans' own index."""
    if status is None:
        return []
    if status not in STATUS_CODES:
        raise ValueError(f"status must be one of {', '.join(STATUS_CODES)}")
    if status == "error":
        return [_FAILED]
    return [_S.c.status_code == STATUS_CODES[status]]


def _column_filters(c: Any, service: str | None, name: str | None
                    ) -> list[ColumnElement[bool]]:
    filters: list[ColumnElement[bool]] = []
    if service:
        filters.append(c.service_name == service)
    if name:
        filters.append(c.name.ilike(f"%{escape_like(name)}%", escape="\\"))
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


def _scan_attributes(conn: Connection, matched: ColumnElement[bool], terms: Sequence[Term],
                     wanted: int) -> tuple[dict[bytes, tuple[int, str]], int]:
    """({trace id: (its newest matching span's start, name)}, bodies looked at, or -1
    when it stopped at `wanted` traces): the newest ATTR_SCAN_CAP spans of the window
    that match the columns and whose bytes may match the terms
    (storage/queries/body_match.py), decoded."""
    c = _S.c
    latest: dict[bytes, tuple[int, str]] = {}
    scanned = 0
    # On PostgreSQL fetched whole (the reads run in autocommit, where a server-side
    # cursor needs a transaction): the cap bounds it to a few megabytes. SQLite
    # steps the statement as rows are taken, so stopping early reads less.
    result = conn.execute(
        select(c.trace_id, c.start_ns, c.name, c.body)
        .where(matched, may_match(c.body, terms))
        .order_by(c.start_ns.desc()).limit(ATTR_SCAN_CAP))
    with result:
        for trace_id, start, span_name, body in result:
            scanned += 1
            try:
                attributes, _ = spanbody.decode(bytes(body))
            except DecodeError:
                continue
            if all(_holds(t, attributes) for t in terms):
                tid = bytes(trace_id)
                if tid not in latest:  # rows come newest first
                    if len(latest) == wanted:
                        return latest, -1  # one more than wanted: there are more
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
    spans of the range: the search form's suggestions, from the spans themselves.
    One pass for both: the distinct (service, name) pairs of the spans from the
    oldest start of that walk on (found on the index alone), as the search reads."""
    walk = _window(_newest(project_id, start_ns, end_ns, NAMES_CAP), _S.c.start_ns)
    with store.reader.connect() as conn:
        oldest = conn.execute(select(func.min(walk.c.start_ns))).scalar()
        if oldest is None:
            return [], []
        pairs = conn.execute(
            select(_S.c.service_name, _S.c.name).distinct()
            .where(_S.c.project_id == project_id, _S.c.start_ns >= int(oldest),
                   _S.c.start_ns < end_ns)).all()
    services = sorted({s for s, _ in pairs})[:limit]
    operations = sorted({n for s, n in pairs if not service or s == service})[:limit]
    return services, operations


