"""Merged groups in the writer: an error of a group merged into another (a source,
storage/groups/merge.py) is counted on the source's own row, as always, so that undoing the
merge gives it back its own counts; but whether it reopens a resolved group or wakes
a snoozed one is the target's affair, since the target is what the list shows.

One read per commit (per 500 groups touched) finds which of the commit's groups are
merged and into what; most commits touch none, and pay only that read on the
groups' primary key. The members' reads (a target's count, hourly counts, facets
over its sources) run only for a target whose status the commit may change.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from storage import rows
from storage.writer import in_chunks
from storage.writer.placeholders import mark

GROUPS = rows.ERROR_GROUPS
GroupKey = tuple[int, str]


def targets(cursor: Any, dialect: str, keys: Iterable[GroupKey]) -> dict[GroupKey, GroupKey]:
    """{(project, source's fingerprint): (project, target's fingerprint)} of the keys
    that name merged groups."""
    q = mark(dialect)
    out: dict[GroupKey, GroupKey] = {}
    for project_id, chunk in in_chunks.by_project(keys):
        cursor.execute(
            f'SELECT s.fingerprint, t.fingerprint FROM "{GROUPS}" s JOIN "{GROUPS}" t '
            f"ON t.id = s.merged_into WHERE s.project_id = {q} "
            f"AND s.merged_into IS NOT NULL "
            f"AND s.fingerprint IN ({', '.join([q] * len(chunk))})", (project_id, *chunk))
        out.update(((project_id, source), (project_id, target))
                   for source, target in cursor.fetchall())
    return out


def members_sql(dialect: str) -> str:
    """A subquery of a group's members' fingerprints (itself and the groups merged
    into it), taking (project, fingerprint, project, fingerprint) as parameters."""
    q = mark(dialect)
    return (f'SELECT fingerprint FROM "{GROUPS}" WHERE project_id = {q} AND '
            f'(fingerprint = {q} OR merged_into = (SELECT id FROM "{GROUPS}" '
            f"WHERE project_id = {q} AND fingerprint = {q}))")


def total_count_sql(alias: str) -> str:
    """A group's count with those of the groups merged into it, as an SQL expression
    over its error_groups row named `alias`."""
    return (f'({alias}.count + COALESCE((SELECT sum(m.count) FROM "{GROUPS}" m '
            f"WHERE m.project_id = {alias}.project_id AND m.merged_into = {alias}.id), 0))")
