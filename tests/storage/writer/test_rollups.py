"""The rollup upserts of storage/writer/rollups.py: a metric-fed rollup row holds its
latency buckets, and every upsert into it adds its counts bucket by bucket, also when
two collectors write the same row at once (PostgreSQL)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
import sqlalchemy as sa

from storage import rows
from storage.store import Store
from storage.writer.groups import RollupKey, upsert_rollups

MINUTE = 1_700_000_040
KEY: RollupKey = (1, "web", "prod", "GET", "/a", MINUTE)


def add(conn: Any, counts: list[Any], buckets: dict[int, int]) -> None:
    upsert_rollups(conn.connection.cursor(), conn.dialect.name, {KEY: counts},
                   {(KEY, b): n for b, n in buckets.items()}, rows.METRIC_REQUEST_ROLLUPS, None)


def stored(store: Store) -> list[tuple[Any, ...]]:
    """(table, count, error count, duration sum, buckets) of each metric rollup row."""
    out = []
    with store.reader.connect() as conn:
        for table in ("metric_request_rollups", "metric_request_rollups_hourly"):
            for row in conn.execute(sa.text(
                    f"SELECT count, error_count, duration_sum_ms, buckets FROM {table}")):
                out.append((table, *row[:3], {int(b): n for b, n in json.loads(row[3]).items()}))
    return out


def test_upserts_add_counts_bucket_by_bucket(store: Store) -> None:
    with store.writer.begin() as conn:
        add(conn, [3, 1, 30.0], {-400: 1, 232: 2})
    with store.writer.begin() as conn:
        add(conn, [4, 0, 12.5], {232: 3, 300: 1})
    assert stored(store) == [
        ("metric_request_rollups", 7, 1, 42.5, {-400: 1, 232: 5, 300: 1}),
        # coarse buckets: ceil(fine / 5)
        ("metric_request_rollups_hourly", 7, 1, 42.5, {-80: 1, 47: 5, 60: 1})]


@pytest.mark.postgres
@pytest.mark.parametrize("existing", [False, True])
def test_two_writers_on_postgres_add_into_one_row_at_once(pg_url: str, existing: bool) -> None:
    """The second writer's upsert waits for the first's transaction, then adds to the
    row as that one committed it: neither writer's counts are lost."""
    store = Store(pg_url)
    if existing:
        with store.writer.begin() as conn:
            add(conn, [1, 0, 1.0], {5: 1})
    second_done = threading.Event()
    errors: list[BaseException] = []

    def second() -> None:
        try:
            with store.writer.begin() as conn:
                add(conn, [2, 1, 20.0], {232: 1, 300: 1})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        second_done.set()

    with store.writer.begin() as conn:
        add(conn, [3, 0, 3.0], {232: 2, 7: 1})
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.5)
        assert not second_done.is_set()  # waiting for this transaction's row
    thread.join(10)
    assert errors == [] and second_done.is_set()
    first, coarse = ({5: 1}, {1: 1}) if existing else ({}, {})
    assert stored(store) == [
        ("metric_request_rollups", 5 + existing, 1, 23.0 + existing,
         {**first, 7: 1, 232: 3, 300: 1}),
        ("metric_request_rollups_hourly", 5 + existing, 1, 23.0 + existing,
         {**coarse, 2: 1, 47: 3, 60: 1})]
    store.dispose()
