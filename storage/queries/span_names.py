"""A project's distinct span names, read by skipping along the (project, name, start)
index (ix_spans_project_name): one index seek a name, however many spans carry it.
The trace search turns its name filter (a case-insensitive substring) into the list
of names that hold it, then walks that index for those names alone
(storage/queries/trace_search.py), instead of reading every span of the range.

A project with more than NAMES_LISTED names gets None: the list would cost more
than it saves, and the search reads the range instead."""

from __future__ import annotations

from sqlalchemy import Connection, Text, bindparam, select, text

NAMES_LISTED = 500

# WITH RECURSIVE with a counter rather than a LIMIT, which PostgreSQL refuses in the
# recursive part; the same statement on both engines.
_SKIP = text("""
WITH RECURSIVE named(name, n) AS (
    SELECT min(name), 1 FROM spans WHERE project_id = :project_id
    UNION ALL
    SELECT (SELECT min(s.name) FROM spans s
            WHERE s.project_id = :project_id AND s.name > named.name), n + 1
    FROM named WHERE named.name IS NOT NULL AND n <= :cap
)
SELECT name FROM named WHERE name IS NOT NULL
""").bindparams(bindparam("project_id"), bindparam("cap")).columns(name=Text).subquery()


def escape_like(part: str) -> str:
    return part.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def names_holding(conn: Connection, project_id: int, part: str) -> list[str] | None:
    """The project's span names holding `part`, compared by the same ILIKE as the
    search's (the database's own lower-casing); None past NAMES_LISTED names."""
    holds = _SKIP.c.name.ilike(f"%{escape_like(part)}%", escape="\\")
    rows = conn.execute(select(_SKIP.c.name, holds),
                        {"project_id": project_id, "cap": NAMES_LISTED}).all()
    if len(rows) > NAMES_LISTED:
        return None
    return [name for name, matched in rows if matched]
