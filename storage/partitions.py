"""Daily time partitions of the raw tables on PostgreSQL: spans, logs and metric
points (declarative `PARTITION BY RANGE` on their time column, migration 0013).

One partition per UTC day, named `<table>_pYYYYMMDD`, holds the rows whose time is in
[midnight, next midnight); `<table>_default` holds every row of a day that has no
partition (client clocks can be anywhere: year 1970, year 2500), so a write never
fails for want of a partition and the queries, which read the parent table, still
see those rows. Days are created ahead of time (`ensure_partitions`, at start-up and
by the retention sweep) and dropped whole when they age out
(`drop_partitions_before`): no row-by-row delete of raw data. SQLite has none of
this: there, is_partitioned is False and the other two do nothing.

Migration 0013 repeats the naming rule (a migration imports nothing from the
application); change both or neither."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text

# Table -> the time column it is partitioned by.
PARTITIONED: dict[str, str] = {"spans": "start_ns", "logs": "time_ns",
                               "metric_points": "time_ns"}

DAY_NS = 86_400 * 10**9
DEFAULT_SUFFIX = "_default"
# Two collectors starting together both create today's partitions: the second waits
# on this lock (held to the end of its transaction), then finds them made.
_LOCK_KEY = 0x50415254  # "PART"
# Dropping a partition takes an ACCESS EXCLUSIVE lock on its parent table: waiting
# behind a long dashboard query would hold every writer and reader queued behind the
# sweep. Better to give up and let the next sweep try again.
DROP_LOCK_TIMEOUT = "5s"
_NAME = re.compile(r"^(?P<table>.+)_p(?P<day>\d{8})$")
_BOUND = re.compile(r"FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)")


def day_of(time_ns: int) -> int:
    """The UTC day (days since 1970-01-01) of a time in nanoseconds."""
    return time_ns // DAY_NS


def partition_name(table: str, day: int) -> str:
    return f"{table}_p{datetime.fromtimestamp(day * 86_400, UTC):%Y%m%d}"


def is_partition_name(name: str) -> bool:
    """Whether `name` is one of the partitions of a PARTITIONED table, day or default:
    not a table of storage/schema/ (Alembic's compare must not offer to drop it)."""
    if name.endswith(DEFAULT_SUFFIX):
        return name[: -len(DEFAULT_SUFFIX)] in PARTITIONED
    match = _NAME.match(name)
    return match is not None and match["table"] in PARTITIONED


def is_partitioned(conn: Any, table: str) -> bool:
    """Whether `table` is partitioned by day here (never on SQLite)."""
    if conn.dialect.name != "postgresql":
        return False
    return bool(conn.execute(text(
        "SELECT EXISTS (SELECT 1 FROM pg_partitioned_table "
        "WHERE partrelid = to_regclass(:t))"), {"t": table}).scalar())


def partitions(conn: Any, table: str) -> dict[str, tuple[int, int] | None]:
    """The partitions of `table`: name -> its [from, to) range in nanoseconds, None for
    the default one."""
    found: dict[str, tuple[int, int] | None] = {}
    for name, bound in conn.execute(text(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(:t)"),
            {"t": table}):
        match = _BOUND.search(bound)
        found[name] = (int(match[1]), int(match[2])) if match else None
    return found


def ensure_partitions(conn: Any, now_ns: int, days_ahead: int = 3) -> list[str]:
    """Create the partitions of today and the next `days_ahead` days; their names.

    Runs in the caller's transaction (which commits it). Rows of such a day already in
    the default partition are moved into the new one in the same transaction: a
    partition cannot be attached while the default holds rows of its range."""
    tables = [t for t in PARTITIONED if is_partitioned(conn, t)]
    if not tables:
        return []
    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
    today = day_of(now_ns)
    created = []
    for table in tables:
        existing = partitions(conn, table)
        for day in range(today, today + days_ahead + 1):
            name = partition_name(table, day)
            if name not in existing:
                _create_day(conn, table, name, day)
                created.append(name)
    return created


def _create_day(conn: Any, table: str, name: str, day: int) -> None:
    """Made apart, filled with the day's rows from the default partition, then attached.
    ATTACH locks the parent only against schema changes (SHARE UPDATE EXCLUSIVE), where
    CREATE TABLE ... PARTITION OF would stop every reader and writer for a moment."""
    column = PARTITIONED[table]
    low, high = day * DAY_NS, (day + 1) * DAY_NS
    conn.execute(text(f'CREATE TABLE "{name}" (LIKE "{table}" INCLUDING DEFAULTS)'))
    default = table + DEFAULT_SUFFIX
    if default in partitions(conn, table):
        # Locked first: a writer's uncommitted row of this day in the default would be
        # missed by the move, and then make the ATTACH fail. This waits for such writers
        # to commit, and keeps new ones out until this transaction commits.
        conn.execute(text(f'LOCK TABLE "{default}" IN ACCESS EXCLUSIVE MODE'))
        conn.execute(text(
            f'WITH moved AS (DELETE FROM "{default}" WHERE "{column}" >= :low '
            f'AND "{column}" < :high RETURNING *) INSERT INTO "{name}" SELECT * FROM moved'),
            {"low": low, "high": high})
    # Bounds are integers we computed, not input: written as literals, which ATTACH needs.
    conn.execute(text(f'ALTER TABLE "{table}" ATTACH PARTITION "{name}" '
                      f"FOR VALUES FROM ({low}) TO ({high})"))


def drop_partitions_before(conn: Any, table: str, cutoff_ns: int) -> list[str]:
    """Drop the day partitions of `table` wholly older than `cutoff_ns`; their names.

    Never the default partition: its rows are of any time, and go by the retention
    sweep's ordinary delete. Runs in the caller's transaction. Raises
    sqlalchemy.exc.OperationalError (the transaction is then lost) when the table stays
    locked longer than DROP_LOCK_TIMEOUT, by a long query: try again later."""
    if not is_partitioned(conn, table):
        return []
    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
    old = sorted(name for name, bound in partitions(conn, table).items()
                 if bound is not None and bound[1] <= cutoff_ns)
    if not old:
        return []
    before = conn.execute(text("SELECT current_setting('lock_timeout')")).scalar()
    conn.execute(text("SELECT set_config('lock_timeout', :v, true)"),
                 {"v": DROP_LOCK_TIMEOUT})
    for name in old:
        conn.execute(text(f'ALTER TABLE "{table}" DETACH PARTITION "{name}"'))
        conn.execute(text(f'DROP TABLE "{name}"'))
    conn.execute(text("SELECT set_config('lock_timeout', :v, true)"), {"v": before})
    return old


def include_name(name: str | None, type_: str, _parents: Any) -> bool:
    """Alembic's `include_name` hook: the partitions are no tables of the schema."""
    return not (type_ == "table" and name is not None and is_partition_name(name))
