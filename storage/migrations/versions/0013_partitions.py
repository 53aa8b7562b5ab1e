"""PostgreSQL: spans, logs and metric points become tables partitioned by UTC day
(`PARTITION BY RANGE` on their time column), with a DEFAULT partition for rows of a
day that has none. Their primary keys take the time column in, as PostgreSQL
requires of a partitioned table's unique keys. SQLite: nothing changes.

Each table is rewritten: renamed aside, its partitioned successor created, the rows
copied (`INSERT ... SELECT`), the old one dropped, all in the migration's transaction.
The keys and indexes are built after the copy, which is much faster than keeping
them up to date row by row. Existing rows go to a partition of their own day, for
every day that holds rows within a year before today (what a retention setting can
keep): left in the default partition they would cost the same to copy but could
never be dropped by day, and the day partitions the collector creates at start-up
would have to move them out again. Rows older than that, or of the future, go to the
default partition; today and the next three days get a partition as at start-up.

Frozen: the partition names (`<table>_pYYYYMMDD`, `<table>_default`) repeat
storage/partitions.py's rule as it was when this revision was written; a migration
imports nothing from the application.

Revision ID: 0013
Revises: 0011
"""

import time
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

DAY_NS = 86_400 * 10**9
DAYS_BACK = 366
DAYS_AHEAD = 3

Names = tuple[str, ...]
# table -> (time column, old primary key, new primary key, indexes: name -> columns)
TABLES: dict[str, tuple[str, Names, Names, dict[str, Names]]] = {
    "spans": ("start_ns", ("project_id", "trace_id", "span_id"),
              ("project_id", "trace_id", "span_id", "start_ns"),
              {"ix_spans_project_start": ("project_id", "start_ns")}),
    "logs": ("time_ns", ("project_id", "record_key"), ("project_id", "record_key", "time_ns"),
             {"ix_logs_project_time": ("project_id", "time_ns"),
              "ix_logs_project_trace": ("project_id", "trace_id"),
              "ix_logs_project_service_time": ("project_id", "service_name", "time_ns")}),
    "metric_points": ("time_ns", ("project_id", "series_key", "time_ns"),
                      ("project_id", "series_key", "time_ns"),
                      {"ix_metric_points_project_time": ("project_id", "time_ns")}),
}


def _name(table: str, day: int) -> str:
    return f"{table}_p{datetime.fromtimestamp(day * 86_400, UTC):%Y%m%d}"


def _run(sql: str) -> None:
    op.get_bind().exec_driver_sql(sql)


def _keys(table: str, primary_key: tuple[str, ...], indexes: dict[str, tuple[str, ...]]) -> None:
    _run(f'ALTER TABLE "{table}" ADD CONSTRAINT "{table}_pkey" '
         f"PRIMARY KEY ({', '.join(primary_key)})")
    for index, columns in indexes.items():
        _run(f'CREATE INDEX "{index}" ON "{table}" ({", ".join(columns)})')


def _drop_keys(table: str, indexes: dict[str, tuple[str, ...]]) -> None:
    # Named when the table was made, under whatever name it had then: asked, not guessed.
    pkey = op.get_bind().execute(sa.text(
        "SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(:t) AND contype = 'p'"),
        {"t": table}).scalar_one()
    _run(f'ALTER TABLE "{table}" DROP CONSTRAINT "{pkey}"')
    for index in indexes:
        _run(f'DROP INDEX "{index}"')


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    today = int(time.time()) // 86_400
    for table, (column, _old_key, new_key, indexes) in TABLES.items():
        old = f"{table}_unpartitioned"
        _run(f'ALTER TABLE "{table}" RENAME TO "{old}"')
        _drop_keys(old, indexes)  # their names are the new table's
        _run(f'CREATE TABLE "{table}" (LIKE "{old}" INCLUDING DEFAULTS) '
             f'PARTITION BY RANGE ("{column}")')
        _run(f'CREATE TABLE "{table}_default" PARTITION OF "{table}" DEFAULT')
        held = bind.execute(sa.text(
            f'SELECT DISTINCT "{column}" / {DAY_NS} FROM "{old}" '
            f'WHERE "{column}" >= :low AND "{column}" < :high'),
            {"low": (today - DAYS_BACK) * DAY_NS, "high": today * DAY_NS}).scalars()
        for day in sorted({*held, *range(today, today + DAYS_AHEAD + 1)}):
            _run(f'CREATE TABLE "{_name(table, day)}" PARTITION OF "{table}" '
                 f"FOR VALUES FROM ({day * DAY_NS}) TO ({(day + 1) * DAY_NS})")
        _run(f'INSERT INTO "{table}" SELECT * FROM "{old}"')
        _run(f'DROP TABLE "{old}"')
        _keys(table, new_key, indexes)
        _run(f'ANALYZE "{table}"')


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, (_column, old_key, _new_key, indexes) in TABLES.items():
        partitioned = f"{table}_partitioned"
        _run(f'ALTER TABLE "{table}" RENAME TO "{partitioned}"')
        _drop_keys(partitioned, indexes)
        _run(f'CREATE TABLE "{table}" (LIKE "{partitioned}" INCLUDING DEFAULTS)')
        _keys(table, old_key, indexes)
        # Two spans that differ only by their start were two rows, and are one now: the
        # old key has no room for both (a client that sent the same span id twice).
        _run(f'INSERT INTO "{table}" SELECT * FROM "{partitioned}" ON CONFLICT DO NOTHING')
        _run(f'DROP TABLE "{partitioned}"')  # and its partitions with it
