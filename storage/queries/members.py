"""The members of merged error groups (storage/groups/merge.py): a group merged into another
(a source) keeps its own rows, and every read of the other (the target) takes its
sources' rows too. These helpers say which fingerprints a read covers and which
group each one counts in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.sql.elements import ColumnElement

from storage import schema
from storage.store import Store

_G = schema.error_groups
# {target's fingerprint: its fingerprint and those of the groups merged into it}.
Members = Mapping[str, Sequence[str]]


def of_groups(conn: Any, project_id: int, groups: Mapping[int, str]) -> dict[str, list[str]]:
    """{fingerprint: [it, its sources' fingerprints...]} of the groups {id: fingerprint}."""
    out = {fp: [fp] for fp in groups.values()}
    if not groups:
        return out
    rows = conn.execute(select(_G.c.merged_into, _G.c.fingerprint).where(and_(
        _G.c.project_id == project_id, _G.c.merged_into.in_(list(groups))))
        .order_by(_G.c.id))
    for into, fingerprint in rows:
        out[groups[int(into)]].append(fingerprint)
    return out


def of_group(store: Store, project_id: int, group_id: int, fingerprint: str) -> list[str]:
    with store.reader.connect() as conn:
        return of_groups(conn, project_id, {group_id: fingerprint})[fingerprint]


def fingerprints_of(project_id: int, fingerprint: str) -> Any:
    """A subquery of the fingerprints of a group and of the groups merged into it (the
    writer's raw-SQL form: storage/writer/merged.py, members_sql)."""
    g = _G.alias("target")
    return select(_G.c.fingerprint).where(and_(_G.c.project_id == project_id, or_(
        _G.c.fingerprint == fingerprint, _G.c.merged_into == select(g.c.id).where(and_(
            g.c.project_id == project_id, g.c.fingerprint == fingerprint)).scalar_subquery())))


def merged_count() -> Any:
    """The count of the groups merged into the `error_groups` row of the enclosing
    query, as a scalar subquery (0 when none; storage/writer/merged.py, total_count_sql)."""
    m = _G.alias("merged")
    return select(func.coalesce(func.sum(m.c.count), 0)).where(
        and_(m.c.project_id == _G.c.project_id, m.c.merged_into == _G.c.id)).scalar_subquery()


def expand(fingerprints: Sequence[str], members: Members | None
           ) -> tuple[list[str], dict[str, str]]:
    """Every fingerprint to read for the groups `fingerprints`, and the group each
    counts in ({fingerprint: target's})."""
    root = {m: fp for fp in fingerprints for m in (members or {}).get(fp, [fp])}
    for fp in fingerprints:
        root.setdefault(fp, fp)
    return list(root), root


def one_of(column: Any, fingerprints: str | Sequence[str]) -> ColumnElement[bool]:
    """`column` is the fingerprint, or one of them (a merged group's members)."""
    if isinstance(fingerprints, str):
        return column == fingerprints  # type: ignore[no-any-return]
    return column.in_(list(fingerprints))  # type: ignore[no-any-return]


def merged_totals(conn: Any, project_id: int) -> dict[int, tuple[int, int, int]]:
    """{target's id: (count, first seen, last seen) of the groups merged into it}: a
    read of the merged groups alone, on the (project_id, merged_into) index."""
    return {int(into): (int(n), int(first), int(last)) for into, n, first, last in
            conn.execute(_merged_totals(project_id).element)}


T = TypeVar("T")


def with_totals(group: T, totals: tuple[int, int, int] | None) -> T:
    """A group (storage/queries/errors.py's Group) with its merged groups' totals."""
    if totals is None:
        return group
    n, first, last = totals
    g: Any = group
    return replace(g, count=g.count + n, first_seen_us=min(g.first_seen_us, first),  # type: ignore[no-any-return]
                   last_seen_us=max(g.last_seen_us, last))


def roots_matching(project_id: int, condition: Any, merged: bool = True
                   ) -> ColumnElement[bool]:
    """The listed (unmerged) groups `_G` of which a member matches `condition`, a
    function of a member's error_groups row: a search or a facet filter that finds a
    source finds its target. `merged`: False when the project has no merged group."""
    if not merged:
        return condition(_G)  # type: ignore[no-any-return]
    s = _G.alias("member")
    return or_(  # type: ignore[no-any-return]
        _G.c.id.in_(select(s.c.merged_into).where(and_(
            s.c.project_id == project_id, s.c.merged_into.isnot(None), condition(s)))),
        condition(_G))


def _merged_totals(project_id: int) -> Any:
    """Per target, the sums of the groups merged into it (only merged rows are read:
    the (project_id, merged_into) index)."""
    m = _G.alias("merged")
    return (select(m.c.merged_into.label("into"), func.sum(m.c.count).label("count"),
                   func.min(m.c.first_seen_us).label("first"),
                   func.max(m.c.last_seen_us).label("last"))
            .where(and_(m.c.project_id == project_id, m.c.merged_into.isnot(None)))
            .group_by(m.c.merged_into).subquery("merged_totals"))


def with_merged(project_id: int, group_columns: Sequence[Any]
                ) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The groups joined to their sources' sums: (from, the group's columns with its
    members' count, first and last seen, those three by name)."""
    t = _merged_totals(project_id)
    totals = {
        "count": (_G.c.count + func.coalesce(t.c.count, 0)).label("count"),
        "first_seen": case((t.c.first < _G.c.first_seen_us, t.c.first),
                           else_=_G.c.first_seen_us).label("first_seen_us"),
        "last_seen": case((t.c.last > _G.c.last_seen_us, t.c.last),
                          else_=_G.c.last_seen_us).label("last_seen_us")}
    replaced = {"count": totals["count"], "first_seen_us": totals["first_seen"],
                "last_seen_us": totals["last_seen"]}
    columns = tuple(replaced.get(c.name, c) for c in group_columns)
    return _G.outerjoin(t, t.c.into == _G.c.id), columns, totals


@dataclass(frozen=True)
class MergedGroup:
    """A group merged into the one shown, with its own counts."""

    id: int
    fingerprint: str
    exception_class: str
    message: str
    count: int
    last_seen_us: int


def merged_groups(store: Store, project_id: int, group_id: int) -> list[MergedGroup]:
    """The groups merged into this one, each with its own counts, in id order."""
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_G.c.id, _G.c.fingerprint, _G.c.exception_class, _G.c.message,
                   _G.c.count, _G.c.last_seen_us)
            .where(and_(_G.c.project_id == project_id, _G.c.merged_into == group_id))
            .order_by(_G.c.id)).all()
    return [MergedGroup(int(i), fp, cls, message, int(n), int(last))
            for i, fp, cls, message, n, last in rows]
