"""The alerts outbox: facts (what happened) and deliveries (what is to be sent where).

A fact is written in the transaction of the change that causes it: the writer's new
groups and reopenings (storage/writer/alert_facts.py), an evaluator's verdict here
(`record_fact`). Its dedupe key is unique per project, so collectors that find the
same fact store it once. Then, on whichever collector gets there first:

- `route_pending` turns each fact into its deliveries, once: the facts are taken
  with `FOR UPDATE SKIP LOCKED` on PostgreSQL (a second collector skips them) and
  inside SQLite's write transaction, which is exclusive;
- `claim_due` leases due deliveries to one sender the same way; a sender that dies
  mid-send lets the lease expire and another sends it again: at least once, and
  exactly once while every collector is healthy;
- `fold` turns deliveries beyond a destination's rate into one digest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, and_, delete, exists, func, insert, or_, select, update

from model.timeutil import now_us as clock
from storage import schema, upsert
from storage.store import Store
from storage.writer.alert_facts import dedupe_key as stored_key

PENDING, SENT, FAILED, FOLDED = "pending", "sent", "failed", "folded"
FINISHED = (SENT, FAILED, FOLDED)
PURGE_BATCH = 500
_F, _D = schema.alert_facts, schema.alert_deliveries


@dataclass(frozen=True, slots=True)
class Fact:
    id: int
    project_id: int
    kind: str
    subject: str
    dedupe_key: str
    at_us: int
    details: dict[str, Any]
    created_us: int
    routed_us: int | None


@dataclass(frozen=True, slots=True)
class Delivery:
    id: int
    fact_id: int | None  # None for a digest
    project_id: int
    destination: str
    status: str  # schema.DELIVERY_STATUSES
    attempts: int
    next_attempt_us: int
    claimed_until_us: int | None
    last_error: str | None
    created_us: int
    sent_us: int | None
    digest_id: int | None  # the digest a folded delivery went into
    details: dict[str, Any] | None  # a digest's {"facts": [fact ids]}


@dataclass(frozen=True, slots=True)
class Recent:
    """A fact with its deliveries, for the dashboard."""

    fact: Fact
    deliveries: tuple[Delivery, ...]


def _fact(row: Row[Any]) -> Fact:
    return Fact(int(row.id), int(row.project_id), row.kind, row.subject, row.dedupe_key,
                int(row.at_us), dict(row.details), int(row.created_us),
                None if row.routed_us is None else int(row.routed_us))


def _delivery(row: Row[Any]) -> Delivery:
    def opt(value: Any) -> int | None:
        return None if value is None else int(value)
    return Delivery(int(row.id), opt(row.fact_id), int(row.project_id), row.destination,
                    row.status, int(row.attempts), int(row.next_attempt_us),
                    opt(row.claimed_until_us), row.last_error, int(row.created_us),
                    opt(row.sent_us), opt(row.digest_id),
                    None if row.details is None else dict(row.details))


def record_fact(store: Store, project_id: int, kind: str, subject: str, dedupe_key: str,
                at_us: int, details: dict[str, Any], now_us: int | None = None) -> bool:
    """Store a fact unless one with its dedupe key is stored (by this collector or
    another); True when this call stored it."""
    if kind not in schema.ALERT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(schema.ALERT_KINDS)}")
    statement = upsert.insert(store.dialect, _F).values(
        project_id=project_id, kind=kind, subject=subject, dedupe_key=stored_key(dedupe_key),
        at_us=at_us, details=details, created_us=clock() if now_us is None else now_us,
    ).on_conflict_do_nothing(index_elements=["project_id", "dedupe_key"]).returning(_F.c.id)
    with store.writer.begin() as conn:
        return conn.execute(statement).first() is not None


Decide = Callable[[list[Fact]], Iterable[tuple[int, str]]]


def route_pending(store: Store, decide: Decide, limit: int = 100,
                  now_us: int | None = None) -> int:
    """Route up to `limit` facts not routed yet, in one transaction: `decide(facts)`
    names a destination for each (fact id, destination) to deliver, and those
    deliveries are made pending now. Returns how many facts were routed (0: none
    left). Facts another collector is routing are skipped, not waited for."""
    now = clock() if now_us is None else now_us
    taken = (select(_F).where(_F.c.routed_us.is_(None)).order_by(_F.c.id).limit(limit)
             .with_for_update(skip_locked=True))
    with store.writer.begin() as conn:
        facts = [_fact(row) for row in conn.execute(taken)]
        if not facts:
            return 0
        projects = {f.id: f.project_id for f in facts}
        chosen = sorted({(fact_id, destination) for fact_id, destination in decide(facts)
                         if fact_id in projects})
        if chosen:
            conn.execute(insert(_D), [
                {"fact_id": fact_id, "project_id": projects[fact_id],
                 "destination": destination, "status": PENDING, "attempts": 0,
                 "next_attempt_us": now, "created_us": now}
                for fact_id, destination in chosen])
        conn.execute(update(_F).where(_F.c.id.in_(list(projects))).values(routed_us=now))
    return len(facts)


def claim_due(store: Store, now_us: int, limit: int, lease_s: float,
              destination: str | None = None) -> list[Delivery]:
    """Lease up to `limit` pending deliveries that are due and not leased (or whose
    lease has run out) to the caller for `lease_s` seconds, oldest due first; of one
    `destination` when given. Deliveries another collector is claiming are skipped."""
    where = [_D.c.status == PENDING, _D.c.next_attempt_us <= now_us,
             or_(_D.c.claimed_until_us.is_(None), _D.c.claimed_until_us < now_us)]
    if destination is not None:
        where.append(_D.c.destination == destination)
    until = now_us + int(lease_s * 1_000_000)
    due = (select(_D.c.id).where(*where).order_by(_D.c.next_attempt_us, _D.c.id)
           .limit(limit).with_for_update(skip_locked=True))
    with store.writer.begin() as conn:
        ids = list(conn.execute(due).scalars())
        if not ids:
            return []
        conn.execute(update(_D).where(_D.c.id.in_(ids)).values(claimed_until_us=until))
        rows = conn.execute(select(_D).where(_D.c.id.in_(ids))
                            .order_by(_D.c.next_attempt_us, _D.c.id))
        return [_delivery(row) for row in rows]


def mark_sent(store: Store, ids: Sequence[int], now_us: int) -> None:
    if not ids:
        return
    with store.writer.begin() as conn:
        conn.execute(update(_D).where(_D.c.id.in_(list(ids))).values(
            status=SENT, sent_us=now_us, attempts=_D.c.attempts + 1, claimed_until_us=None))


def mark_retry(store: Store, delivery_id: int, next_attempt_us: int, error: str) -> None:
    """One more failed attempt; due again at `next_attempt_us`. `error` must name no
    URL or secret (the destinations say what went wrong in their own words)."""
    with store.writer.begin() as conn:
        conn.execute(update(_D).where(_D.c.id == delivery_id, _D.c.status == PENDING).values(
            attempts=_D.c.attempts + 1, next_attempt_us=next_attempt_us, last_error=error,
            claimed_until_us=None))


def mark_failed(store: Store, delivery_id: int, error: str) -> None:
    """Given up: counted as failed, never sent again."""
    with store.writer.begin() as conn:
        conn.execute(update(_D).where(_D.c.id == delivery_id, _D.c.status == PENDING).values(
            status=FAILED, attempts=_D.c.attempts + 1, last_error=error, claimed_until_us=None))


def fold(store: Store, destination: str, ids: Sequence[int], now_us: int,
         lease_s: float | None = None) -> Delivery | None:
    """Fold the pending deliveries `ids` of `destination` into one digest, in one
    transaction: a new pending delivery due now (leased to the caller for `lease_s`
    when given, so that it can send it at once), whose details name every fact
    folded, and the folded ones marked `folded` with the digest's id. Deliveries no
    longer pending (sent by another collector meanwhile) are left as they are;
    None when none is left to fold."""
    if not ids:
        return None
    until = None if lease_s is None else now_us + int(lease_s * 1_000_000)
    folding = and_(_D.c.id.in_(list(ids)), _D.c.destination == destination,
                   _D.c.status == PENDING)
    with store.writer.begin() as conn:
        rows = list(conn.execute(select(_D.c.id, _D.c.fact_id, _D.c.project_id, _D.c.details)
                                 .where(folding).order_by(_D.c.id).with_for_update()))
        if not rows:
            return None
        facts: list[int] = []
        for row in rows:  # a digest folded again names its facts
            facts += [int(row.fact_id)] if row.fact_id is not None else list(
                (row.details or {}).get("facts", []))
        digest_id = conn.execute(insert(_D).values(
            fact_id=None, project_id=rows[0].project_id, destination=destination,
            status=PENDING, attempts=0, next_attempt_us=now_us, claimed_until_us=until,
            created_us=now_us, details={"facts": sorted(set(facts))}).returning(_D.c.id)
        ).scalar_one()
        conn.execute(update(_D).where(_D.c.id.in_([row.id for row in rows])).values(
            status=FOLDED, digest_id=digest_id, claimed_until_us=None))
        return _delivery(conn.execute(select(_D).where(_D.c.id == digest_id)).one())


def sent_since(store: Store, destination: str, since_us: int) -> int:
    """Messages sent to `destination` from `since_us` on, by every collector (a
    digest counts as one)."""
    query = select(func.count()).where(_D.c.destination == destination, _D.c.sent_us >= since_us,
                                       _D.c.status == SENT)
    with store.reader.connect() as conn:
        return int(conn.execute(query).scalar_one())


def facts(store: Store, ids: Iterable[int]) -> list[Fact]:
    """The facts `ids`, in id order (those purged are missing)."""
    wanted = sorted(set(ids))
    if not wanted:
        return []
    with store.reader.connect() as conn:
        return [_fact(row) for row in conn.execute(
            select(_F).where(_F.c.id.in_(wanted)).order_by(_F.c.id))]


def counts(store: Store) -> dict[tuple[str, str], int]:
    """Deliveries kept, per (destination, status)."""
    query = select(_D.c.destination, _D.c.status, func.count()).group_by(
        _D.c.destination, _D.c.status)
    with store.reader.connect() as conn:
        return {(destination, status): int(n) for destination, status, n in conn.execute(query)}


def recent(store: Store, project_id: int, limit: int = 50) -> list[Recent]:
    """A project's latest facts, newest first, each with its deliveries."""
    with store.reader.connect() as conn:
        latest = [_fact(row) for row in conn.execute(
            select(_F).where(_F.c.project_id == project_id).order_by(_F.c.id.desc())
            .limit(limit))]
        if not latest:
            return []
        by_fact: dict[int, list[Delivery]] = {f.id: [] for f in latest}
        for row in conn.execute(select(_D).where(_D.c.fact_id.in_(list(by_fact)))
                                .order_by(_D.c.id)):
            delivery = _delivery(row)
            by_fact[int(row.fact_id)].append(delivery)
    return [Recent(f, tuple(by_fact[f.id])) for f in latest]


def purge(store: Store, before_us: int, batch: int = PURGE_BATCH) -> int:
    """Delete finished deliveries and routed facts created before `before_us`, `batch`
    rows per transaction (so a long backlog never holds the write lock for long);
    a fact with a delivery still pending is kept. Returns how many rows went."""
    pending = exists().where(_D.c.fact_id == _F.c.id, _D.c.status == PENDING)
    steps = [
        (_D, select(_D.c.id).where(_D.c.created_us < before_us, _D.c.status.in_(FINISHED))),
        (_F, select(_F.c.id).where(_F.c.created_us < before_us, _F.c.routed_us.isnot(None),
                                   ~pending)),
    ]
    removed = 0
    for table, query in steps:
        while True:
            with store.writer.begin() as conn:
                ids = list(conn.execute(query.order_by(table.c.id).limit(batch)).scalars())
                if ids:
                    conn.execute(delete(table).where(table.c.id.in_(ids)))
            removed += len(ids)
            if len(ids) < batch:
                break
    return removed
