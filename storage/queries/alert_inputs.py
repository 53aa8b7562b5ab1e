"""What the alert evaluators read besides deploys and performance (those have their
own queries): groups busy enough for a frequency rule, their events in a window,
and facts already recorded. Every collector runs these every evaluate_s, so each
is bounded by an index: groups by (project_id, last_seen_us), hourly counts by
their key, events by (project_id, fingerprint, ts_us), facts by their unique
(project_id, dedupe_key)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import and_, func, literal, select

from storage import schema
from storage.store import Store
from storage.writer.alert_facts import dedupe_key as stored_key

HOUR = 3600
US = 1_000_000
IN_CHUNK = 500
# Busy groups examined per project and evaluation, the busiest first: enough for
# any real project, and a bound on the work a storm of new groups can cause.
MAX_CANDIDATES = 1000


@dataclass(frozen=True, slots=True)
class BusyGroup:
    id: int
    fingerprint: str
    exception_class: str
    message: str
    status: str
    first_seen_us: int
    last_seen_us: int
    recent: int  # events in the hours touching the window: at least those in it
    # Its own fingerprint and those of the groups merged into it (storage/groups/merge.py):
    # their events count here, as on the error list.
    fingerprints: tuple[str, ...] = ()


def busy_groups(store: Store, project_id: int, since_us: int, more_than: int
                ) -> list[BusyGroup]:
    """Groups not ignored, seen since `since_us`, with more than `more_than` events
    counted in the hours from the one holding `since_us` on: the only groups that can
    have more than `more_than` events since then. The busiest first. A merged group is
    counted in the group it was merged into, whose status decides (ignoring a target
    silences its merged groups too)."""
    g, h = schema.error_groups, schema.error_group_hourly
    member = g.alias("member")
    first_hour = since_us // US // HOUR * HOUR
    root = func.coalesce(member.c.merged_into, member.c.id)
    recent = func.sum(h.c.count)
    per_root = (
        select(root.label("root"), recent.label("recent"))
        .select_from(member.join(h, and_(h.c.project_id == member.c.project_id,
                                         h.c.fingerprint == member.c.fingerprint,
                                         h.c.hour >= first_hour)))
        .where(and_(member.c.project_id == project_id, member.c.last_seen_us >= since_us))
        .group_by(root)
        .having(recent > more_than)).subquery()
    query = (
        select(g.c.id, g.c.fingerprint, g.c.exception_class, g.c.message, g.c.status,
               g.c.first_seen_us, g.c.last_seen_us, per_root.c.recent)
        .join(per_root, per_root.c.root == g.c.id)
        .where(and_(g.c.project_id == project_id, g.c.status != "ignored",
                    g.c.merged_into.is_(None)))
        .order_by(per_root.c.recent.desc(), g.c.id).limit(MAX_CANDIDATES))
    with store.reader.connect() as conn:
        rows = conn.execute(query).all()
        members: dict[int, list[str]] = {}
        ids = [int(r.id) for r in rows]
        for start in range(0, len(ids), IN_CHUNK):
            for target, fingerprint in conn.execute(
                    select(g.c.merged_into, g.c.fingerprint)
                    .where(and_(g.c.project_id == project_id,
                                g.c.merged_into.in_(ids[start:start + IN_CHUNK])))
                    .order_by(g.c.fingerprint)):
                members.setdefault(int(target), []).append(fingerprint)
    return [BusyGroup(int(r.id), r.fingerprint, r.exception_class, r.message, r.status,
                      int(r.first_seen_us), int(r.last_seen_us), int(r.recent),
                      (r.fingerprint, *members.get(int(r.id), [])))
            for r in rows]


def event_count(store: Store, project_id: int, fingerprint: str | Sequence[str],
                start_us: int, end_us: int, env: str | None = None,
                service: str | None = None, at_most: int | None = None) -> int:
    """A group's stored events (of one fingerprint, or of a merged group's several)
    with ts_us in [start_us, end_us), of `env` and `service` when given; counting
    stops at `at_most` (enough to say "more than")."""
    e = schema.error_events
    fingerprints = [fingerprint] if isinstance(fingerprint, str) else list(fingerprint)
    clauses = [e.c.project_id == project_id,
               e.c.fingerprint == fingerprints[0] if len(fingerprints) == 1
               else e.c.fingerprint.in_(fingerprints),
               e.c.ts_us >= start_us, e.c.ts_us < end_us]
    if env is not None:
        clauses.append(e.c.environment == env)
    if service is not None:
        clauses.append(e.c.service == service)
    inner = select(literal(1).label("one")).where(and_(*clauses))
    if at_most is not None:
        inner = inner.limit(at_most)
    with store.reader.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(inner.subquery())).scalar()
                   or 0)


def fact_times(store: Store, project_id: int, dedupe_keys: Iterable[str]) -> dict[str, int]:
    """{dedupe key: at_us} of the facts recorded with these keys (as given: a long
    key is looked up in the shortened form it is stored in)."""
    f = schema.alert_facts
    given = {stored_key(key): key for key in dedupe_keys}
    wanted = sorted(given)
    found: dict[str, int] = {}
    with store.reader.connect() as conn:
        for i in range(0, len(wanted), IN_CHUNK):
            for key, at_us in conn.execute(
                    select(f.c.dedupe_key, f.c.at_us).where(and_(
                        f.c.project_id == project_id,
                        f.c.dedupe_key.in_(wanted[i:i + IN_CHUNK])))):
                found[given[str(key)]] = int(at_us)
    return found
