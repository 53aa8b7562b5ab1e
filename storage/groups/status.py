"""Error group status changes made by a person (through the dashboard or its API).

Open -> Resolved, Open -> Ignored, Resolved/Ignored -> Open. Every change is
recorded in error_status_changes with the reason `user` and who made it (`actor`'s
name), and in the audit log (`group.resolve`, `group.ignore`, `group.snooze`,
`group.reopen`), both in the transaction of the change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, select, update

from model.timeutil import now_us
from storage import schema
from storage.audit.log import SYSTEM, Actor, Target, record
from storage.queries import members
from storage.schema import GROUP_STATUSES as STATUSES
from storage.store import Store

ACTOR_LENGTH = 200  # error_status_changes.actor
# Groups changed by one bulk action at most (the list shows 50 a page).
MAX_BULK = 500
ID_MAX = 2**31 - 1

_G = schema.error_groups


@dataclass(frozen=True)
class Snooze:
    """Ignore until one of these (storage/writer/snooze.py reopens the group then, as a
    status change with the reason `snooze ended`); None: no such condition."""

    until_us: int | None = None  # a time: its first error after it
    events: int | None = None  # this many more errors
    per_hour: int | None = None  # more than this many errors in an hour

    def __post_init__(self) -> None:
        if self.until_us is not None and not 0 < self.until_us < 2**63:
            raise ValueError("snooze until_us must be a time in microseconds (1 to 2^63-1)")
        for name in ("events", "per_hour"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 10**12:
                raise ValueError(f"snooze {name} must be a whole number from 1 to 10^12")

    def any(self) -> bool:
        return (self.until_us, self.events, self.per_hour) != (None, None, None)


def _check(status: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")


def current_release(conn: Any, project_id: int, fingerprint: str) -> str | None:
    """The newest release the group (with the groups merged into it) has seen: the one
    first seen last (an old release still running may have been seen more recently)."""
    f = schema.error_group_facets
    group = members.fingerprints_of(project_id, fingerprint)
    return conn.execute(
        select(f.c.value).where(and_(f.c.project_id == project_id,
                                     f.c.fingerprint.in_(group), f.c.facet == "release"))
        .order_by(f.c.first_seen_us.desc(), f.c.value.desc()).limit(1)).scalar()


def _action(status: str, snooze: Snooze) -> str:
    if status == "resolved":
        return "group.resolve"
    if status == "ignored":
        return "group.snooze" if snooze.any() else "group.ignore"
    return "group.reopen"


def _change(conn: Any, project_id: int, group_id: int, where: Any, fingerprint: str,
            previous: str, status: str, at: int, actor: Actor | None,
            next_release: bool = False, snooze: Snooze | None = None) -> None:
    resolved = status == "resolved"
    release = current_release(conn, project_id, fingerprint) if resolved and next_release \
        else None
    sn = snooze if status == "ignored" and snooze is not None else Snooze()
    reopen_at = None
    if sn.events is not None:
        # Counted with the groups merged into it, as storage/writer/snooze.py counts.
        reopen_at = int(conn.execute(select(_G.c.count + members.merged_count())
                                     .where(where)).scalar_one()) \
            + sn.events
    conn.execute(update(_G).where(where).values(
        status=status, resolved_us=at if resolved else None, resolved_release=release,
        snooze_until_us=sn.until_us, snooze_count=reopen_at, snooze_per_hour=sn.per_hour))
    conn.execute(schema.error_status_changes.insert(), {
        "project_id": project_id, "fingerprint": fingerprint, "from_status": previous,
        "to_status": status, "reason": "user", "at_us": at,
        "actor": None if actor is None else actor.name[:ACTOR_LENGTH]})
    after: dict[str, Any] = {"status": status}
    if resolved:
        after.update(next_release=next_release, resolved_release=release)
    if sn.any():
        after["snooze"] = {"until_us": sn.until_us, "events": sn.events,
                           "per_hour": sn.per_hour}
    record(conn, actor or SYSTEM, _action(status, sn), Target("group", group_id, project_id),
           before={"status": previous}, after=after, at_us=at)


def set_status(store: Store, project_id: int, fingerprint: str, status: str,
               at_us: int | None = None, actor: Actor | None = None,
               next_release: bool = False, snooze: Snooze | None = None) -> str | None:
    """Set a group's status; returns the previous status, or None if there is no such group.
    Resolved with `next_release`: only an error of a release the group had not seen by
    now reopens it (storage/writer/groups.py); a group none of whose errors had a
    release is resolved plainly. Ignored with `snooze`: until one of its conditions."""
    _check(status)
    at = now_us() if at_us is None else at_us
    where = and_(_G.c.project_id == project_id, _G.c.fingerprint == fingerprint)
    with store.writer.begin() as conn:
        row = conn.execute(
            select(_G.c.id, _G.c.status).where(where).with_for_update()).first()
        if row is None:
            return None
        previous = row.status
        if previous == status and snooze is None:
            return str(previous)
        _change(conn, project_id, int(row.id), where, fingerprint, previous, status, at,
                actor, next_release, snooze)
    return str(previous)


def set_statuses(store: Store, project_id: int, group_ids: Sequence[int], status: str,
                 actor: Actor | None = None, at_us: int | None = None,
                 next_release: bool = False, snooze: Snooze | None = None) -> int:
    """Set the status of several groups (by id) in one transaction, each change
    recorded (one audit record per group changed); groups of other projects and
    unknown ids are left out. Returns how many
    changed (those already in `status` do not, unless snoozed: ignored groups are
    snoozed too, each until its own count plus `snooze.events`)."""
    _check(status)
    if snooze is not None and status != "ignored":
        raise ValueError("only an ignored group can be snoozed")
    if len(group_ids) > MAX_BULK:
        raise ValueError(f"at most {MAX_BULK} groups at once")
    # error_groups.id is a 32-bit key: a larger id names no group (and PostgreSQL
    # would refuse the query).
    ids = sorted({i for i in group_ids if 0 < i <= ID_MAX})
    if not ids:
        return 0
    at = now_us() if at_us is None else at_us
    changed = 0
    with store.writer.begin() as conn:
        # In id order, so that two bulk actions lock their rows in one order.
        rows = conn.execute(
            select(_G.c.id, _G.c.fingerprint, _G.c.status)
            .where(and_(_G.c.project_id == project_id, _G.c.id.in_(ids)))
            .order_by(_G.c.id).with_for_update()).all()
        for group_id, fingerprint, previous in rows:
            if previous == status and snooze is None:
                continue
            where = and_(_G.c.project_id == project_id, _G.c.id == group_id)
            _change(conn, project_id, group_id, where, fingerprint, previous, status, at,
                    actor, next_release, snooze)
            changed += 1
    return changed
