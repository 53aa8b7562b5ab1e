"""Merging error groups, and undoing it.

A merged group (a source) points at the group it was merged into (the target) with
`error_groups.merged_into`, and keeps its own occurrences, hourly counts and facets:
reads add them to the target's (storage/queries/members.py), and the writer follows
the target's status for a source's new errors (storage/writer/merged.py). Undoing a
merge clears the pointer, and the source is back with exactly its own counts.

Merges are flat: a group merged into a source is re-pointed to the target, so a
target's members are always one step away. Each merge and unmerge is recorded in
error_status_changes (reason `merge` / `unmerge` on the target, `merged into` /
`unmerged from` on each source) with who made it, and in the audit log, once per
merge (`group.merge` on the target) and unmerge (`group.unmerge` on the source).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, or_, select, update

from model.timeutil import now_us
from storage import schema
from storage.audit.log import SYSTEM, Actor, Target, record
from storage.groups.status import ACTOR_LENGTH, ID_MAX, MAX_BULK
from storage.store import Store

_G = schema.error_groups
DETAIL_LENGTH = 200  # error_status_changes.detail


class MergeError(ValueError):
    """A merge or unmerge that cannot be made; `missing`: because of unknown ids."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def _ids(ids: Sequence[int]) -> str:
    text = ", ".join(f"#{i}" for i in ids)
    return text if len(text) <= DETAIL_LENGTH else text[:DETAIL_LENGTH - 1] + "…"


def _record(conn: Any, project_id: int, fingerprint: str, status: str, reason: str,
            detail: str, at: int, actor: Actor | None) -> None:
    conn.execute(schema.error_status_changes.insert(), {
        "project_id": project_id, "fingerprint": fingerprint, "from_status": status,
        "to_status": status, "reason": reason, "at_us": at, "detail": detail,
        "actor": None if actor is None else actor.name[:ACTOR_LENGTH]})


def merge(store: Store, project_id: int, into: int, group_ids: Sequence[int],
          actor: Actor | None = None, at_us: int | None = None) -> list[int]:
    """Merge the groups `group_ids` of the project into the group `into`; returns the
    ids merged (sorted). Groups already merged into one of them follow them. Raises
    MergeError: fewer than two groups, `into` among the sources, an unknown id or one
    of another project (`missing`), or a target that is itself merged."""
    sources = sorted(set(group_ids) - {into})
    if into in group_ids and len(set(group_ids)) == 1:
        raise MergeError("a group cannot be merged into itself")
    if not sources:
        raise MergeError("merge needs at least two groups")
    if len(sources) > MAX_BULK:
        raise MergeError(f"at most {MAX_BULK} groups at once")
    wanted = sorted({into, *sources})
    unknown = [i for i in wanted if not 0 < i <= ID_MAX]
    at = now_us() if at_us is None else at_us
    with store.writer.begin() as conn:
        # In id order with every row locked: two merges lock their rows in one order.
        rows = {} if unknown else {r.id: r for r in conn.execute(
            select(_G.c.id, _G.c.fingerprint, _G.c.status, _G.c.merged_into)
            .where(and_(_G.c.project_id == project_id, _G.c.id.in_(wanted)))
            .order_by(_G.c.id).with_for_update())}
        unknown += [i for i in wanted if i not in rows and i not in unknown]
        if unknown:
            raise MergeError(f"no error group {_ids(unknown)} in this project", missing=True)
        target = rows[into]
        if target.merged_into is not None:
            raise MergeError(f"group #{into} is merged into #{target.merged_into}: "
                             f"merge into that one")
        conn.execute(update(_G).where(and_(
            _G.c.project_id == project_id,
            or_(_G.c.id.in_(sources), _G.c.merged_into.in_(sources))))
            .values(merged_into=into))
        _record(conn, project_id, target.fingerprint, target.status, "merge",
                _ids(sources), at, actor)
        for i in sources:
            _record(conn, project_id, rows[i].fingerprint, rows[i].status, "merged into",
                    f"#{into}", at, actor)
        record(conn, actor or SYSTEM, "group.merge", Target("group", into, project_id),
               before={"merged_into": {str(i): rows[i].merged_into for i in sources}},
               after={"groups": sources}, at_us=at)
    return sources


def unmerge(store: Store, project_id: int, group_id: int, actor: Actor | None = None,
            at_us: int | None = None) -> int | None:
    """Undo the merge of the group `group_id`: it is listed again with its own counts.
    Returns the id of the group it had been merged into; None if there is no such
    group in the project. Raises MergeError if it is not merged."""
    if not 0 < group_id <= ID_MAX:
        return None
    at = now_us() if at_us is None else at_us
    with store.writer.begin() as conn:
        row = conn.execute(
            select(_G.c.fingerprint, _G.c.status, _G.c.merged_into)
            .where(and_(_G.c.project_id == project_id, _G.c.id == group_id))
            .with_for_update()).first()
        if row is None:
            return None
        if row.merged_into is None:
            raise MergeError(f"group #{group_id} is not merged into another")
        into = int(row.merged_into)
        conn.execute(update(_G).where(and_(_G.c.project_id == project_id,
                                           _G.c.id == group_id)).values(merged_into=None))
        target = conn.execute(select(_G.c.fingerprint, _G.c.status).where(
            and_(_G.c.project_id == project_id, _G.c.id == into))).first()
        if target is not None:
            _record(conn, project_id, target.fingerprint, target.status, "unmerge",
                    f"#{group_id}", at, actor)
        _record(conn, project_id, row.fingerprint, row.status, "unmerged from",
                f"#{into}", at, actor)
        record(conn, actor or SYSTEM, "group.unmerge", Target("group", group_id, project_id),
               before={"merged_into": into}, after={"merged_into": None}, at_us=at)
    return into
