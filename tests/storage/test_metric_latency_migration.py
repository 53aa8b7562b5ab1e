"""Migration 0021 (storage/migrations/versions/0021_metric_latency_in_rollups.py) on
SQLite and PostgreSQL: the metric-fed rollups' latency rows go into their rollup rows'
`buckets` and back out, with every count."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import command

from storage import keys, rows
from storage.store import Store
from storage.writer.groups import upsert_rollups
from tests.support.migrations import migrate

MINUTE = 1_700_000_040  # a minute's start, 40 minutes into its hour
HOUR = MINUTE - MINUTE % 3600
KEY_COLUMNS = "project_id, service, env, method, route"


def _buckets(store: Store, table: str) -> dict[tuple[Any, ...], dict[int, int]]:
    with store.reader.connect() as conn:
        return {tuple(r[:-1]): {int(b): n for b, n in json.loads(r[-1]).items()}
                for r in conn.execute(sa.text(
                    f"SELECT {KEY_COLUMNS}, count, buckets FROM {table}"))}


def _latency(store: Store, table: str, time: str) -> dict[tuple[Any, ...], dict[int, int]]:
    out: dict[tuple[Any, ...], dict[int, int]] = {}
    with store.reader.connect() as conn:
        counts = {tuple(r[:-1]): r[-1] for r in conn.execute(sa.text(
            f"SELECT {KEY_COLUMNS}, {time}, count FROM {table.replace('latency', 'rollups')}"))}
        for key in counts:
            out[(*key[:-1], counts[key])] = {}
        for r in conn.execute(sa.text(f"SELECT {KEY_COLUMNS}, {time}, bucket, count "
                                      f"FROM {table}")):
            out[(*r[:5], counts[tuple(r[:6])])][int(r[6])] = r[7]
    return out


def test_latency_rows_go_into_the_rollup_rows_and_back(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "migrate")
    a = (project, "web", "prod", "GET", "/a", MINUTE)
    b = (project, "web", "prod", "POST", "/b", MINUTE)
    with store.writer.begin() as conn:  # two commits into one row: merged by the upsert
        cursor = conn.connection.cursor()
        upsert_rollups(cursor, conn.dialect.name, {a: [3, 1, 30.0], b: [1, 0, 5.0]},
                       {(a, -400): 1, (a, 232): 2, (b, 161): 1},
                       rows.METRIC_REQUEST_ROLLUPS, None)
    with store.writer.begin() as conn:
        cursor = conn.connection.cursor()
        upsert_rollups(cursor, conn.dialect.name, {a: [4, 0, 40.0]},
                       {(a, 232): 3, (a, 300): 1}, rows.METRIC_REQUEST_ROLLUPS, None)
    minutes = {(*a[:5], 7): {-400: 1, 232: 5, 300: 1}, (*b[:5], 1): {161: 1}}
    hours = {(*a[:5], 7): {-80: 1, 47: 5, 60: 1}, (*b[:5], 1): {33: 1}}
    assert _buckets(store, "metric_request_rollups") == minutes
    assert _buckets(store, "metric_request_rollups_hourly") == hours

    migrate(store, command.downgrade, "0020")
    assert _latency(store, "metric_request_latency", "minute") == minutes
    assert _latency(store, "metric_request_latency_hourly", "hour") == hours
    with store.writer.begin() as conn:  # as the writer before 0021 wrote, and a row of none
        conn.execute(sa.text(
            f"INSERT INTO metric_request_latency ({KEY_COLUMNS}, minute, bucket, count) "
            f"VALUES (:p, 'web', 'prod', 'POST', '/b', :m, 170, 2)"), {"p": project, "m": MINUTE})
        conn.execute(sa.text(
            "UPDATE metric_request_rollups SET count = count + 2 WHERE route = '/b'"))
        conn.execute(sa.text(
            f"INSERT INTO metric_request_rollups ({KEY_COLUMNS}, minute, count, error_count, "
            f"duration_sum_ms) VALUES (:p, 'web', 'prod', 'GET', '/c', :m, 0, 0, 0)"),
            {"p": project, "m": MINUTE})

    migrate(store, command.upgrade, "head")
    minutes[(*b[:5], 3)] = {161: 1, 170: 2}
    del minutes[(*b[:5], 1)]
    minutes[(project, "web", "prod", "GET", "/c", 0)] = {}
    assert _buckets(store, "metric_request_rollups") == minutes
    assert _buckets(store, "metric_request_rollups_hourly") == hours
    with store.writer.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
    assert not {"metric_request_latency", "metric_request_latency_hourly"} & tables
    with store.writer.begin() as conn:  # the upsert merges into migrated rows
        cursor = conn.connection.cursor()
        upsert_rollups(cursor, conn.dialect.name, {b: [1, 0, 5.0]}, {(b, 161): 1, (b, 1): 1},
                       rows.METRIC_REQUEST_ROLLUPS, None)
    assert _buckets(store, "metric_request_rollups")[(*b[:5], 4)] == {1: 1, 161: 2, 170: 2}
    store.dispose()
