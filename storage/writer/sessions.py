"""Release health in the writer's transaction: each session count (a session's start
or end, a bucket of pre-aggregated sessions: model.records.SessionCount) is added to
its release's rollups only if its mark is new to the project.

The marks go in first, `INSERT ... ON CONFLICT DO NOTHING RETURNING`: the marks it
returns are those this commit is the first to see, and only their counts are added.
On PostgreSQL a second collector inserting a mark that a first has inserted but not
committed waits for that commit and then inserts nothing, so of two collectors (or a
retry that reached another) exactly one counts it. Marks and rollup keys are written
in sorted order, so that two transactions lock them in one order.

Then, in the same transaction, atomic upserts: `session_rollups` adds the counts per
(release, environment, start minute); `session_users` records each distinct user per
hour, raising (never lowering) its errored and crashed flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage import rows
from storage.rows import Row, WireBatch
from storage.writer.copy import upsert_rows
from storage.writer.placeholders import marks

MARKS, ROLLUPS, USERS = rows.SESSION_MARKS, rows.SESSION_ROLLUPS, rows.SESSION_USERS
OUTCOMES = rows.SESSION_OUTCOMES
_MARK = rows.SESSIONS.getter("mark")
_KEY = rows.SESSIONS.getter("release", "environment", "minute")
_USER = rows.SESSIONS.getter("user_key")
_COUNTS = rows.SESSIONS.getter(*OUTCOMES)
KEY_COLUMNS = rows.SESSION_KEY.column_names
_KEY_TYPES = ("int4", "text", "text", "int8")
# Marks per SQLite statement (3 values each, far below its 32,766).
SQLITE_MARKS = 500

RollupKey = tuple[int, str, str, int]


def write_sessions(cursor: Any, dialect: str, batches: Sequence[WireBatch],
                   received_us: int) -> None:
    # The first copy of a mark in the commit's order; later copies add nothing.
    fresh: dict[tuple[int, bytes], Row] = {}
    for batch in batches:
        project_id = batch.project_id
        for row in batch.sessions:
            fresh.setdefault((project_id, bytes(_MARK(row))), row)
    if not fresh:
        return
    new = _insert_marks(cursor, dialect, sorted(fresh), received_us)
    rollups: dict[RollupKey, list[int]] = {}
    users: dict[tuple[int, str, str, int, bytes], list[int]] = {}
    for (project_id, mark), row in fresh.items():
        if (project_id, mark) not in new:
            continue
        release, environment, minute = _KEY(row)
        counts = _COUNTS(row)
        key: RollupKey = (project_id, release, environment, minute)
        agg = rollups.get(key)
        if agg is None:
            rollups[key] = list(counts)
        else:
            for i, n in enumerate(counts):
                agg[i] += n
        user_key = bytes(_USER(row))
        if user_key:
            _, _, errored, crashed, abnormal = counts
            ukey = (project_id, release, environment, minute // 3600 * 3600, user_key)
            flags = users.setdefault(ukey, [0, 0])
            flags[0] |= int(errored + crashed + abnormal > 0)
            flags[1] |= int(crashed > 0)
    adds = ", ".join(f'{name} = "{ROLLUPS}".{name} + excluded.{name}' for name in OUTCOMES)
    upsert_rows(cursor, dialect, ROLLUPS, (*KEY_COLUMNS, *OUTCOMES),
                (*_KEY_TYPES, *(["int8"] * len(OUTCOMES))),
                f"ON CONFLICT ({', '.join(KEY_COLUMNS)}) DO UPDATE SET {adds}",
                [(*k, *v) for k, v in sorted(rollups.items())])
    bigger = "GREATEST" if dialect == "postgresql" else "MAX"
    raise_flags = ", ".join(f'{name} = {bigger}("{USERS}".{name}, excluded.{name})'
                            for name in ("errored", "crashed"))
    user_columns = (*KEY_COLUMNS[:-1], "hour", "user_key")
    upsert_rows(cursor, dialect, USERS, (*user_columns, "errored", "crashed"),
                (*_KEY_TYPES, "bytea", "int4", "int4"),
                f"ON CONFLICT ({', '.join(user_columns)}) DO UPDATE SET {raise_flags}",
                [(*k, *v) for k, v in sorted(users.items())])


def _insert_marks(cursor: Any, dialect: str, keys: list[tuple[int, bytes]],
                  received_us: int) -> set[tuple[int, bytes]]:
    """Insert the marks (sorted); the ones this statement inserted."""
    head = f'INSERT INTO "{MARKS}" (project_id, mark, received_us) '
    tail = " ON CONFLICT DO NOTHING RETURNING project_id, mark"
    inserted: set[tuple[int, bytes]] = set()
    if dialect == "postgresql":
        cursor.execute(head + "SELECT * FROM unnest(%s::int4[], %s::bytea[], %s::int8[])"
                       + tail, [[p for p, _ in keys], [m for _, m in keys],
                                [received_us] * len(keys)])
        inserted.update((int(p), bytes(m)) for p, m in cursor.fetchall())
        return inserted
    row = f"({marks(dialect, 3)})"
    for start in range(0, len(keys), SQLITE_MARKS):
        chunk = keys[start:start + SQLITE_MARKS]
        cursor.execute(head + "VALUES " + ", ".join([row] * len(chunk)) + tail,
                       [v for p, m in chunk for v in (p, m, received_us)])
        inserted.update((int(p), bytes(m)) for p, m in cursor.fetchall())
    return inserted
