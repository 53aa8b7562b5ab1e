"""storage/partitions.py and migration 0013: spans, logs and metric points partitioned
by UTC day on PostgreSQL, a default partition for any other time; SQLite untouched.
Days are relative to the real clock: the migration and start-up make today's."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from model.records import GAUGE, Batch, LogRecord, MetricPoint, Span
from storage import keys, schema
from storage import partitions as partitions_module
from storage.partitions import (
    DAY_NS,
    PARTITIONED,
    drop_partitions_before,
    ensure_partitions,
    is_partitioned,
    partition_name,
    partitions,
)
from storage.queries import logs as lq
from storage.queries import metric_series as mq
from storage.queries import traces as tq
from storage.retention import sweep
from storage.store import Store
from storage.wire.batch import write_batches
from tests.support.migrations import migrate
from tests.support.postgres import wait_until_blocked

TODAY = time.time_ns() // DAY_NS
FAR_PAST = 86_400 * 10**9 + 5  # 1970-01-02
FAR_FUTURE = 7_000_000_000 * 10**9  # 2191-10-25


@pytest.fixture
def pg(pg_url: str) -> Iterator[tuple[Store, int]]:
    store = Store(pg_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "partitions")
    yield store, project
    store.dispose()


def span(n: int, start_ns: int) -> Span:
    return Span(f"{n:032x}", f"{n:016x}", "", f"op{n}", 2, start_ns, start_ns + 1000, 0, "",
                "web", "tests", {"service.name": "web"}, {"n": n})


def log(n: int, time_ns: int) -> LogRecord:
    return LogRecord(time_ns, time_ns + 5, 9, "", f"{n:032x}", "", 1, "", "web", "tests",
                     {"service.name": "web"}, attributes={"n": n}, body=f"record {n}")


def point(n: int, time_ns: int) -> MetricPoint:
    return MetricPoint(name="temp", unit="1", description="", kind=GAUGE, temporality=0,
                       monotonic=False, service_name="web",
                       resource_attributes={"service.name": "web"}, scope_name="tests",
                       attributes={}, start_ns=0, time_ns=time_ns, value=float(n))


def write(store: Store, project: int, *times: int, first: int = 0) -> None:
    """A span, a log record and a metric point at each time, numbered from `first`."""
    numbered = list(enumerate(times, first))
    batch = Batch(project, spans=[span(n, t) for n, t in numbered],
                  logs=[log(n, t) for n, t in numbered],
                  metrics=[point(n, t) for n, t in numbered])
    with store.writer.begin() as conn:
        write_batches(conn, [batch], 1)


def where(store: Store, table: str) -> dict[str, int]:
    """How many rows of `table` each partition holds."""
    with store.reader.connect() as conn:
        return dict(conn.execute(sa.text(
            f"SELECT tableoid::regclass::text, count(*) FROM {table} GROUP BY 1")).all())


def day_names(table: str, *days: int) -> set[str]:
    return {partition_name(table, day) for day in days}


def test_a_fresh_database_has_today_and_the_next_days_and_a_default(
        pg: tuple[Store, int]) -> None:
    store, _ = pg
    with store.reader.connect() as conn:
        for table in PARTITIONED:
            assert is_partitioned(conn, table)
            found = partitions(conn, table)
            assert found.pop(f"{table}_default") is None
            assert found == {partition_name(table, d): (d * DAY_NS, (d + 1) * DAY_NS)
                             for d in range(TODAY, TODAY + 4)}
        assert not is_partitioned(conn, "error_events")


def test_sqlite_stays_plain(sqlite_url: str) -> None:
    store = Store(sqlite_url)
    store.upgrade()
    with store.writer.begin() as conn:
        assert not any(is_partitioned(conn, table) for table in PARTITIONED)
        assert ensure_partitions(conn, time.time_ns()) == []
        assert drop_partitions_before(conn, "spans", FAR_FUTURE) == []
        names = set(sa.inspect(conn).get_table_names())
    assert names >= set(PARTITIONED) and not any("_p2" in n or "_default" in n for n in names)
    store.dispose()


def test_primary_keys_hold_the_time_on_postgres_only(pg: tuple[Store, int],
                                                     sqlite_url: str) -> None:
    lite = Store(sqlite_url)
    lite.upgrade()
    for store, engine in ((pg[0], "postgresql"), (lite, "sqlite")):
        with store.reader.connect() as conn:
            for table in PARTITIONED:
                declared = schema.metadata.tables[table]
                expected = (declared.info["postgresql_primary_key"] if engine == "postgresql"
                            else tuple(c.name for c in declared.primary_key))
                pk = sa.inspect(conn).get_pk_constraint(table)["constrained_columns"]
                assert tuple(pk) == expected
                assert PARTITIONED[table] in pk or engine == "sqlite"
                assert declared.dialect_options["postgresql"]["partition_by"] == \
                    f"RANGE ({PARTITIONED[table]})"
    lite.dispose()


def test_rows_land_in_their_day_or_the_default_and_are_all_read(
        pg: tuple[Store, int]) -> None:
    store, project = pg
    today, tomorrow = TODAY * DAY_NS + 7, (TODAY + 1) * DAY_NS + 7
    write(store, project, today, tomorrow, FAR_PAST, FAR_FUTURE)
    write(store, project, today, tomorrow, FAR_PAST, FAR_FUTURE)  # a retry adds no row
    for table in PARTITIONED:
        assert where(store, table) == {partition_name(table, TODAY): 1,
                                       partition_name(table, TODAY + 1): 1,
                                       f"{table}_default": 2}
    # The queries read the parent: every row, whichever partition holds it.
    for n, start in enumerate((today, tomorrow, FAR_PAST, FAR_FUTURE)):
        (found,) = tq.get_trace(store, project, f"{n:032x}")
        assert (found.name, found.start_ns, found.attributes) == (f"op{n}", start, {"n": n})
        page = lq.search(store, project, lq.LogFilter(start_ns=start, end_ns=start + 1))
        assert [item["body"] for item in page.items] == [f"record {n}"]
        data = mq.metric_data(store, project, mq.Query(
            name="temp", start_ns=start - 7, end_ns=start - 7 + 60 * 10**9, step_s=60))
        assert data is not None and [g.values for g in data.groups] == [[float(n)]]
    assert lq.search(store, project, lq.LogFilter()).total == 4


def test_a_new_day_takes_its_rows_out_of_the_default(pg: tuple[Store, int]) -> None:
    store, project = pg
    later = TODAY + 10
    write(store, project, later * DAY_NS, later * DAY_NS + DAY_NS - 1, (later + 1) * DAY_NS)
    with store.reader.connect() as conn:
        before = {t: conn.execute(sa.text(f"SELECT * FROM {t} ORDER BY 1, 2, 3")).all()
                  for t in PARTITIONED}
    with store.writer.begin() as conn:
        made = ensure_partitions(conn, later * DAY_NS + 5, days_ahead=0)
    assert sorted(made) == sorted(partition_name(t, later) for t in PARTITIONED)
    for table in PARTITIONED:
        assert where(store, table) == {partition_name(table, later): 2, f"{table}_default": 1}
    with store.reader.connect() as conn:
        after = {t: conn.execute(sa.text(f"SELECT * FROM {t} ORDER BY 1, 2, 3")).all()
                 for t in PARTITIONED}
    assert after == before
    with store.writer.begin() as conn:  # made once
        assert ensure_partitions(conn, later * DAY_NS + 5, days_ahead=0) == []
    write(store, project, later * DAY_NS)  # a retry of a moved row is still one row
    assert where(store, "spans")[partition_name("spans", later)] == 2


def test_only_whole_days_before_the_cutoff_are_dropped_never_the_default(
        pg: tuple[Store, int]) -> None:
    store, project = pg
    first = TODAY - 5
    with store.writer.begin() as conn:
        ensure_partitions(conn, first * DAY_NS, days_ahead=2)  # days first .. first + 2
    write(store, project, first * DAY_NS, (first + 1) * DAY_NS, (first + 2) * DAY_NS, FAR_PAST)
    with store.writer.begin() as conn:
        # The day first + 1 ends after the cutoff: kept whole.
        assert drop_partitions_before(conn, "spans", (first + 1) * DAY_NS + 1) == \
            [partition_name("spans", first)]
        assert drop_partitions_before(conn, "spans", (first + 1) * DAY_NS + 1) == []
    assert where(store, "spans") == {partition_name("spans", first + 1): 1,
                                     partition_name("spans", first + 2): 1,
                                     "spans_default": 1}
    assert len(where(store, "logs")) == 4  # other tables untouched
    with store.writer.begin() as conn:
        dropped = drop_partitions_before(conn, "logs", FAR_FUTURE)
        assert set(dropped) == day_names("logs", *range(first, first + 3),
                                         *range(TODAY, TODAY + 4))
        assert set(partitions(conn, "logs")) == {"logs_default"}
        assert conn.execute(sa.text("SELECT count(*) FROM logs")).scalar() == 1
        assert conn.execute(sa.text("SELECT count(*) FROM pg_class WHERE relname = :n"),
                            {"n": partition_name("logs", first)}).scalar() == 0


def test_two_collectors_ensuring_at_once_both_succeed(pg: tuple[Store, int]) -> None:
    store, _ = pg
    later = (TODAY + 20) * DAY_NS
    made: dict[str, list[str]] = {}
    first = store.writer.connect()
    first.begin()
    made["first"] = ensure_partitions(first, later)  # holds the lock until it commits

    def second() -> None:
        with store.writer.begin() as conn:
            made["second"] = ensure_partitions(conn, later)

    thread = threading.Thread(target=second)
    thread.start()
    try:
        wait_until_blocked(store, thread)
    finally:
        first.commit()
        first.close()
        thread.join(60)
    assert not thread.is_alive()
    assert set(made["first"]) == {name for t in PARTITIONED
                                  for name in day_names(t, *range(TODAY + 20, TODAY + 24))}
    assert made["second"] == []



def _contents(store: Store) -> dict[str, Any]:
    with store.reader.connect() as conn:
        return {t: conn.execute(sa.text(f"SELECT * FROM {t} ORDER BY 1, 2, 3")).all()
                for t in PARTITIONED}


# The last revision before 0031 dropped logs.attributes, which this tree's writer no
# longer writes: the tables of 0011 to 0032 are compared with that column in them.
BEFORE_LOG_ATTRIBUTES_WENT = "0032"


def _attributes_defaulted(store: Store) -> None:
    """Stand-in for the writer of those revisions: the column they wrote gets a value."""
    with store.writer.begin() as conn:
        conn.execute(sa.text("ALTER TABLE logs ALTER COLUMN attributes SET DEFAULT '{}'"))


def test_upgrade_and_downgrade_keep_every_row(empty_pg_url: str) -> None:
    store = Store(empty_pg_url)
    migrate(store, command.upgrade, "0011")
    _attributes_defaulted(store)
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "old")
    days = (TODAY - 400, TODAY - 30, TODAY - 1, TODAY, TODAY + 2, TODAY + 9)
    write(store, project, FAR_PAST, *(d * DAY_NS + 11 for d in days), FAR_FUTURE)
    write(store, project, (TODAY - 30) * DAY_NS + 12, first=8)  # a second row on one day
    before = _contents(store)
    assert all(len(rows) == 9 for rows in before.values())

    migrate(store, command.upgrade, BEFORE_LOG_ATTRIBUTES_WENT)
    assert _contents(store) == before
    for table in PARTITIONED:
        # Within a year back, each day that holds rows has its partition; today and the
        # next three days have one; the rest waits in the default.
        assert where(store, table) == {
            partition_name(table, TODAY - 30): 2, partition_name(table, TODAY - 1): 1,
            partition_name(table, TODAY): 1, partition_name(table, TODAY + 2): 1,
            f"{table}_default": 4}
        with store.reader.connect() as conn:
            assert set(partitions(conn, table)) == {
                f"{table}_default", *day_names(table, TODAY - 30, TODAY - 1,
                                               *range(TODAY, TODAY + 4))}
    (found,) = tq.get_trace(store, project, f"{0:032x}")
    assert found.start_ns == FAR_PAST

    migrate(store, command.downgrade, "0011")
    assert _contents(store) == before
    _attributes_defaulted(store)
    with store.reader.connect() as conn:
        assert not any(is_partitioned(conn, t) for t in PARTITIONED)
        assert conn.execute(sa.text(
            r"SELECT count(*) FROM pg_class WHERE relname ~ '^spans_(p\d{8}|default)$'")
            ).scalar() == 0
        assert tuple(sa.inspect(conn).get_pk_constraint("spans")["constrained_columns"]) == \
            ("project_id", "trace_id", "span_id")
    write(store, project, FAR_PAST)  # the old key dedups again
    assert _contents(store) == before
    store.dispose()


def test_a_new_day_waits_for_a_writer_of_its_rows_into_the_default(
        pg: tuple[Store, int]) -> None:
    store, project = pg
    later = TODAY + 12
    writer = store.writer.connect()
    writer.begin()
    write_batches(writer, [Batch(project, spans=[span(1, later * DAY_NS + 3)])], 1)
    made: list[str] = []

    def ensure() -> None:
        with store.writer.begin() as conn:
            made.extend(ensure_partitions(conn, later * DAY_NS, days_ahead=0))

    thread = threading.Thread(target=ensure)
    thread.start()
    try:
        wait_until_blocked(store, thread)
    finally:
        writer.commit()  # the row it moves was not committed when it began
        writer.close()
        thread.join(60)
    assert not thread.is_alive() and partition_name("spans", later) in made
    assert where(store, "spans") == {partition_name("spans", later): 1}


def test_a_drop_gives_up_behind_a_long_query(pg: tuple[Store, int],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    store, _ = pg
    monkeypatch.setattr(partitions_module, "DROP_LOCK_TIMEOUT", "200ms")
    # A transaction of its own (the store's reads run in autocommit and would let go).
    reader = store.writer.connect()
    reader.execute(sa.text("SELECT count(*) FROM spans"))  # its lock lasts to its end
    try:
        began = time.monotonic()
        with pytest.raises(sa.exc.OperationalError, match="lock timeout"), \
                store.writer.begin() as conn:
            drop_partitions_before(conn, "spans", FAR_FUTURE)
        assert time.monotonic() - began < 30
    finally:
        reader.close()
    with store.writer.begin() as conn:
        assert conn.execute(sa.text("SHOW lock_timeout")).scalar() == "0"
        assert len(drop_partitions_before(conn, "spans", FAR_FUTURE)) == 4


def test_the_retention_sweep_drops_old_days_whole_and_deletes_stragglers(
        pg: tuple[Store, int]) -> None:
    """storage/retention/sweep.py with real partitions: days past the longest setting go as
    whole partitions; a project with a shorter setting, and the default partition's
    old rows, lose theirs row by row; newer rows stay."""
    store, project = pg
    with store.writer.begin() as conn:
        short = keys.ensure_project(conn, "short")
        ensure_partitions(conn, (TODAY - 12) * DAY_NS, days_ahead=12)  # 12 days back on
    old, recent = (TODAY - 10) * DAY_NS + 7, (TODAY - 3) * DAY_NS + 7
    write(store, project, old, recent, FAR_PAST)
    write(store, short, old, recent, FAR_PAST, first=10)
    policy = sweep.Policy({**dict.fromkeys(sweep.SWEPT_TABLES, 0), "spans": 7 * 86_400,
                               "logs": 7 * 86_400},
                              {"short": {"spans": 2 * 86_400}}, 5000)
    outcome = sweep.sweep(store, policy, "me", now_s=TODAY * 86_400 + 60)
    assert outcome.swept  # days -12 .. -8 end before the cutoff (7 days back, plus a minute)
    assert set(outcome.partitions) == day_names("spans", *range(TODAY - 12, TODAY - 7)) | \
        day_names("logs", *range(TODAY - 12, TODAY - 7))
    with store.reader.connect() as conn:
        spans_parts, logs_parts = partitions(conn, "spans"), partitions(conn, "logs")
        left = dict(conn.execute(sa.text("SELECT project_id, count(*) FROM spans GROUP BY 1")
                                 ).all())
        points = conn.execute(sa.text("SELECT count(*) FROM metric_points")).scalar()
    assert partition_name("spans", TODAY - 10) not in spans_parts
    assert partition_name("logs", TODAY - 10) not in logs_parts
    assert partition_name("spans", TODAY - 3) in spans_parts  # inside 7 days: kept whole
    # The long-lived project keeps its recent span; the short one (2 days) loses it too;
    # the far-past rows in the default partition went by row.
    assert left == {project: 1}
    assert points == 6  # metric points are kept for ever here: untouched
