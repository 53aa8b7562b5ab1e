"""The members of merged error groups (storage/merge.py): a group merged into another
(a source) keeps its own rows, and every read of the other (the target) takes its
sources' rows too. These helpers say which fingerprints a read covers and which
group each one counts in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import and_, or_, select
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


def roots_matching(project_id: int, condition: Any) -> ColumnElement[bool]:
    """The listed (unmerged) groups `_G` of which a member matches `condition`, a
    function of a member's error_groups row: a search or a facet filter that finds a
    source finds its target."""
    s = _G.alias("member")
    return or_(  # type: ignore[no-any-return]
        _G.c.id.in_(select(s.c.merged_into).where(and_(
            s.c.project_id == project_id, s.c.merged_into.isnot(None), condition(s)))),
        condition(_G))
