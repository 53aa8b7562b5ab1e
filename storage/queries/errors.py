"""Error groups: the filtered list with sparklines, one group with its occurrences,
its trend and status history, and the errors linked to a trace."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, literal, or_, select
from sqlalchemy.sql.elements import ColumnElement

from storage import schema
from storage.queries import facets as fq
from storage.queries import members as mq
from storage.schema import GROUP_STATUSES as STATUSES
from storage.schema import ISSUE_TYPES  # noqa: F401 - the type filter's values, for the dashboard
from storage.store import Store

SORTS = ("last_seen", "first_seen", "count")
HOUR = 3600
DAY = 86_400
US = 1_000_000


@dataclass(frozen=True)
class Group:
    id: int
    fingerprint: str
    exception_class: str
    message: str
    status: str
    first_seen_us: int
    last_seen_us: int
    count: int
    resolved_us: int | None
    reopen_count: int
    last_reopened_us: int | None
    # Resolved in the next release: the release current then (None: resolved plainly).
    resolved_release: str | None = None
    # Ignored, snoozed (storage/writer/snooze.py): open again at this time, at this
    # count, or when an hour counts more than this many; None: no such condition.
    snooze_until_us: int | None = None
    snooze_count: int | None = None
    snooze_per_hour: int | None = None
    # Merged into that group (storage/groups/merge.py): listed in it, not on its own.
    merged_into: int | None = None
    # `error`, or `performance`: a problem found in traces (storage/writer/detect.py).
    issue_type: str = "error"


@dataclass(frozen=True)
class GroupListItem:
    group: Group
    hourly_24h: list[int]  # 24 counts, oldest first, the last is the current hour
    daily_30d: list[int]  # 30 counts per UTC day, the last is today


@dataclass(frozen=True)
class GroupList:
    items: list[GroupListItem]
    total: int  # groups matching the status filter (and the facet filters)
    by_status: dict[str, int]  # every status, with the facet filters applied


@dataclass(frozen=True)
class Occurrence:
    id: int
    ts_us: int
    exception_class: str
    message: str
    request_id: str | None
    user_id: str | None
    trace_id: str | None
    # Where it came from (errors from OpenTelemetry spans and logs; None otherwise).
    service: str | None = None
    environment: str | None = None
    release: str | None = None
    # The time of the log record it came from: with the trace id, the link to it.
    log_time_ns: int | None = None


@dataclass(frozen=True)
class StatusChange:
    from_status: str
    to_status: str
    reason: str  # "user", "recurrence", "snooze ended", "merge", "unmerge", ...
    at_us: int
    actor: str | None = None  # who, for a change by hand (None: the collector, or unknown)
    detail: str | None = None  # the groups a merge or unmerge named: "#12, #14"


@dataclass(frozen=True)
class TraceError:
    event_id: int
    group_id: int | None
    fingerprint: str
    exception_class: str
    message: str
    ts_us: int
    span_id: str | None
    log_time_ns: int | None = None  # of the log record it came from, if one


_G = schema.error_groups
_E = schema.error_events
_H = schema.error_group_hourly


def _group(row: Any) -> Group:
    return Group(int(row.id), row.fingerprint, row.exception_class, row.message, row.status,
                 int(row.first_seen_us), int(row.last_seen_us), int(row.count),
                 row.resolved_us, int(row.reopen_count), row.last_reopened_us,
                 row.resolved_release, row.snooze_until_us, row.snooze_count,
                 row.snooze_per_hour, row.merged_into, row.issue_type)


_GROUP_COLUMNS = (_G.c.id, _G.c.fingerprint, _G.c.exception_class, _G.c.message, _G.c.status,
                  _G.c.first_seen_us, _G.c.last_seen_us, _G.c.count, _G.c.resolved_us,
                  _G.c.reopen_count, _G.c.last_reopened_us, _G.c.resolved_release,
                  _G.c.snooze_until_us, _G.c.snooze_count, _G.c.snooze_per_hour,
                  _G.c.merged_into, _G.c.issue_type)


def list_groups(store: Store, project_id: int, statuses: Sequence[str] = ("open",),
                sort: str = "last_seen", limit: int = 50, offset: int = 0,
                now_us: int = 0, facets: Mapping[str, str] | None = None,
                search: str | None = None, issue_type: str | None = None) -> GroupList:
    """Groups with a status in `statuses`, newest (or oldest first seen, or most
    frequent) first, each with its 24-hour and 30-day sparkline ending at `now_us`.
    With `facets` ({"environment": "prod", ...}), only the groups that had an error
    with each of those values (storage/queries/facets.py); with `search`, only those
    whose class, message or fingerprint holds it, whatever the case; with
    `issue_type`, only the groups of that type (schema ISSUE_TYPES)."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    with store.reader.connect() as conn:
        # Merged groups are listed in their target, which a filter or a search finds
        # when one of its members matches.
        totals = mq.merged_totals(conn, project_id)
        project = _G.c.project_id == project_id
        if totals:
            # Not `merged_into IS NULL`: the planner would read the NULLs of the
            # (project_id, merged_into) index (every unmerged group) instead of the
            # list's order.
            project = and_(project, func.coalesce(_G.c.merged_into, 0) == 0)
        if facets:
            project = and_(project, mq.roots_matching(project_id, lambda g: fq.matching(
                g.c.project_id, g.c.fingerprint, facets), bool(totals)))
        if matching_text(search) is not None:
            project = and_(project, mq.roots_matching(
                project_id, lambda g: matching_text(search, g), bool(totals)))
        if issue_type is not None:
            project = and_(project, _G.c.issue_type == issue_type)
        where = and_(project, _G.c.status.in_(list(statuses)))
        groups = _page(conn, where, sort, limit, offset, totals)
        by_status = {str(r.status): int(r.n) for r in conn.execute(
            select(_G.c.status, func.count().label("n")).where(project)
            .group_by(_G.c.status))}
        members = mq.of_groups(conn, project_id, {g.id: g.fingerprint for g in groups})
        sparks = _sparklines(conn, project_id, [g.fingerprint for g in groups], now_us,
                             members)
    total = sum(by_status.get(s, 0) for s in statuses)
    items = [GroupListItem(g, *sparks.get(g.fingerprint, ([0] * 24, [0] * 30)))
             for g in groups]
    return GroupList(items, total, {s: by_status.get(s, 0) for s in STATUSES})


def _page(conn: Any, where: Any, sort: str, limit: int, offset: int,
          totals: Mapping[int, tuple[int, int, int]]) -> list[Group]:
    """One page of the list, ordered by each group's totals with its merged groups.

    Not one query joining the totals: ordered by an expression, it would sort every
    group of the project, and PostgreSQL, whose statistics may predate the first
    merge, may pick a nested loop over every group. Instead, the page by the groups'
    own columns (their index), widened by the number of targets, and the targets:
    a merge raises a target's count and last seen and lowers its first seen, so no
    other group can be further down than that by its own column.
    """
    own = {"last_seen": _G.c.last_seen_us, "first_seen": _G.c.first_seen_us,
           "count": _G.c.count}[sort]
    query = select(*_GROUP_COLUMNS).where(where).order_by(own.desc(), _G.c.id.desc())
    if not totals:
        return [_group(r) for r in conn.execute(query.limit(limit).offset(offset))]
    found = {int(r.id): r for r in conn.execute(query.limit(offset + limit + len(totals)))}
    targets = sorted(totals)
    for i in range(0, len(targets), 500):
        found.update((int(r.id), r) for r in conn.execute(
            select(*_GROUP_COLUMNS).where(and_(where, _G.c.id.in_(targets[i:i + 500])))))
    groups = [mq.with_totals(_group(r), totals.get(i)) for i, r in found.items()]
    key = {"last_seen": lambda g: g.last_seen_us, "first_seen": lambda g: g.first_seen_us,
           "count": lambda g: g.count}[sort]
    groups.sort(key=lambda g: (key(g), g.id), reverse=True)
    return groups[offset:offset + limit]


def matching_text(search: str | None, groups: Any = _G) -> ColumnElement[bool] | None:
    """Groups whose class, message or fingerprint holds `search` (case-insensitive
    substring; `%` and `_` are plain characters). lower() on both sides, not ILIKE:
    SQLite has no ILIKE, and its LIKE folds ASCII only."""
    needle = (search or "").strip().lower()
    if not needle:
        return None
    return or_(*(func.lower(column).contains(needle, autoescape=True)
                 for column in (groups.c.exception_class, groups.c.message,
                                groups.c.fingerprint)))


def _sparklines(conn: Any, project_id: int, listed: list[str], now_us: int,
                members: mq.Members | None = None) -> dict[str, tuple[list[int], list[int]]]:
    if not listed:
        return {}
    fingerprints, root = mq.expand(listed, members)
    now_s = now_us // US
    hour0 = now_s // HOUR * HOUR - 23 * HOUR
    day0 = now_s // DAY * DAY - 29 * DAY
    out = {f: ([0] * 24, [0] * 30) for f in listed}
    rows = conn.execute(
        select(_H.c.fingerprint, _H.c.hour, _H.c.count)
        .where(and_(_H.c.project_id == project_id, _H.c.fingerprint.in_(fingerprints),
                    _H.c.hour >= day0)))
    for fingerprint, hour, count in rows:
        hourly, daily = out[root[fingerprint]]
        day = (hour - day0) // DAY
        if 0 <= day < 30:
            daily[day] += count
        slot = (hour - hour0) // HOUR
        if 0 <= slot < 24:
            hourly[slot] += count
    return out


def get_group(store: Store, project_id: int, group_id: int) -> Group | None:
    """A group, its count, first and last seen taking in the groups merged into it."""
    joined, columns, _ = mq.with_merged(project_id, _GROUP_COLUMNS)
    with store.reader.connect() as conn:
        row = conn.execute(select(*columns).select_from(joined).where(
            and_(_G.c.project_id == project_id, _G.c.id == group_id))).first()
    return None if row is None else _group(row)


def groups_by_id(store: Store, project_id: int, group_ids: Sequence[int]) -> list[Group]:
    """The project's groups of these ids (those it has), with their members' totals."""
    wanted = sorted({i for i in group_ids if 0 < i < 2**31})
    if not wanted:
        return []
    joined, columns, _ = mq.with_merged(project_id, _GROUP_COLUMNS)
    with store.reader.connect() as conn:
        rows = conn.execute(select(*columns).select_from(joined).where(
            and_(_G.c.project_id == project_id, _G.c.id.in_(wanted)))).all()
    return [_group(r) for r in rows]


def occurrences(store: Store, project_id: int, fingerprint: str | Sequence[str],
                limit: int = 50, before_id: int | None = None) -> list[Occurrence]:
    """The latest occurrences of a group (or of a merged group's members: their
    fingerprints), newest first; page with `before_id`."""
    where = and_(_E.c.project_id == project_id, mq.one_of(_E.c.fingerprint, fingerprint))
    if before_id is not None:
        where = and_(where, _E.c.id < before_id)
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_E.c.id, _E.c.ts_us, _E.c.exception_class, _E.c.message, _E.c.request_id,
                   _E.c.user_id, _E.c.trace_id, *_ORIGIN)
            .where(where).order_by(_E.c.ts_us.desc(), _E.c.id.desc()).limit(limit)).all()
    return [Occurrence(int(r.id), int(r.ts_us), r.exception_class, r.message, r.request_id,
                       r.user_id, r.trace_id, *_origin(r)) for r in rows]


_ORIGIN = (_E.c.service, _E.c.environment, _E.c.release, _E.c.log_time_ns)


def _origin(row: Any) -> tuple[str | None, str | None, str | None, int | None]:
    return (row.service, row.environment, row.release,
            None if row.log_time_ns is None else int(row.log_time_ns))


def trend(store: Store, project_id: int, fingerprint: str | Sequence[str], start_s: int,
          end_s: int, step_s: int) -> list[tuple[int, int]]:
    """Occurrences per step in [start_s, end_s): (bucket start, count) for every bucket.

    Steps of an hour or more read the hourly counts; shorter steps count the events.
    """
    buckets = max(0, -(-(end_s - start_s) // step_s))
    counts = [0] * buckets
    with store.reader.connect() as conn:
        if step_s >= HOUR and step_s % HOUR == 0:
            slot = ((_H.c.hour - start_s) // literal(step_s)).label("slot")
            rows = conn.execute(
                select(slot, func.sum(_H.c.count))
                .where(and_(_H.c.project_id == project_id,
                            mq.one_of(_H.c.fingerprint, fingerprint),
                            _H.c.hour >= start_s, _H.c.hour < end_s))
                .group_by(slot))
        else:
            slot = ((_E.c.ts_us - start_s * US) // literal(step_s * US)).label("slot")
            rows = conn.execute(
                select(slot, func.count())
                .where(and_(_E.c.project_id == project_id,
                            mq.one_of(_E.c.fingerprint, fingerprint),
                            _E.c.ts_us >= start_s * US, _E.c.ts_us < end_s * US))
                .group_by(slot))
        for index, count in rows:
            if 0 <= int(index) < buckets:
                counts[int(index)] += int(count)
    return [(start_s + i * step_s, c) for i, c in enumerate(counts)]


def status_history(store: Store, project_id: int, fingerprint: str) -> list[StatusChange]:
    c = schema.error_status_changes
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(c.c.from_status, c.c.to_status, c.c.reason, c.c.at_us, c.c.actor,
                   c.c.detail)
            .where(and_(c.c.project_id == project_id, c.c.fingerprint == fingerprint))
            .order_by(c.c.at_us.desc(), c.c.id.desc())).all()
    return [StatusChange(r.from_status, r.to_status, r.reason, int(r.at_us), r.actor,
                         r.detail)
            for r in rows]


def errors_for_trace(store: Store, project_id: int, trace_id: str, limit: int = 100
                     ) -> list[TraceError]:
    """Error events that carried this trace id (from a traceparent or their body)."""
    with store.reader.connect() as conn:
        rows = conn.execute(
            # A merged group's errors link to the group it was merged into.
            select(_E.c.id, func.coalesce(_G.c.merged_into, _G.c.id).label("group_id"),
                   _E.c.fingerprint, _E.c.exception_class,
                   _E.c.message, _E.c.ts_us, _E.c.span_id, _E.c.log_time_ns)
            .select_from(_E.outerjoin(_G, and_(_G.c.project_id == _E.c.project_id,
                                               _G.c.fingerprint == _E.c.fingerprint)))
            .where(and_(_E.c.project_id == project_id, _E.c.trace_id == trace_id))
            .order_by(_E.c.ts_us).limit(limit)).all()
    return [TraceError(int(r.id), r.group_id, r.fingerprint, r.exception_class, r.message,
                       int(r.ts_us), r.span_id, r.log_time_ns) for r in rows]


def groups_first_seen(store: Store, project_id: int, start_us: int, end_us: int,
                      limit: int = 20) -> list[Group]:
    """Groups whose first occurrence falls in [start_us, end_us), oldest first."""
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(*_GROUP_COLUMNS)
            .where(and_(_G.c.project_id == project_id, _G.c.first_seen_us >= start_us,
                        _G.c.first_seen_us < end_us))
            .order_by(_G.c.first_seen_us, _G.c.id).limit(limit)).all()
    return [_group(r) for r in rows]


def groups_first_seen_in_release(store: Store, project_id: int, release: str,
                                 limit: int = 20) -> list[Group]:
    """Groups whose first release (storage/queries/facets.py's first_release) is
    `release`, oldest first: what a deploy of that version brought."""
    f = schema.error_group_facets
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(*_GROUP_COLUMNS)
            .select_from(_G.join(f, and_(f.c.project_id == _G.c.project_id,
                                         f.c.fingerprint == _G.c.fingerprint)))
            .where(and_(_G.c.project_id == project_id, fq.is_first_release(release)))
            .order_by(_G.c.first_seen_us, _G.c.id).limit(limit)).all()
    return [_group(r) for r in rows]


# For reads of groups made elsewhere in one statement with other things
# (storage/queries/deploy_batch.py).
GROUP_COLUMNS = _GROUP_COLUMNS
group_of = _group
