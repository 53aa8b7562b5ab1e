"""The retention sweep (storage/retention/sweep.py) on SQLite and PostgreSQL: rows older
than a signal's setting go, newer ones stay, for every table of every signal; per
project overrides; 0 keeps for ever; batches smaller than the backlog."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from storage import keys
from storage.retention import sweep
from storage.retention.sweep import NS, SWEPT_TABLES, US
from storage.schema import metadata
from storage.store import Store
from tests.support import rows

NOW = 1_795_168_800  # 2026-11-20T10:00:00Z, epoch seconds
DAY = 86400
KEEP = {"spans": 7 * DAY, "logs": 7 * DAY, "metric_points": 7 * DAY,
        "error_occurrences": 30 * DAY, "rollups": 90 * DAY, "deploys": 365 * DAY,
        "check_ins": 30 * DAY}


def insert(conn: Any, table: str, n: int, **values: Any) -> None:
    rows.insert(conn, table, [rows.row(table, n, **values)])


def count(store: Store, table: str, project: int) -> int:
    with store.reader.connect() as conn:
        return int(conn.execute(sa.text(f'SELECT count(*) FROM "{table}" '
                                        "WHERE project_id = :p"), {"p": project}).scalar_one())


def fill(store: Store, project: int, ages_s: list[int]) -> None:
    """A row per age (seconds before NOW) in every table of every signal."""
    with store.writer.begin() as conn:
        for targets in SWEPT_TABLES.values():
            for target in targets:
                for n, age in enumerate(ages_s):
                    at = (NOW - age) * target.per_second
                    if target.table in ("request_rollups", "metric_request_rollups",
                                        "error_group_hourly"):
                        at = at // 60 * 60
                    insert(conn, target.table, n, project_id=project, **{target.column: at})
                    if target.latency:
                        key = {c.name: rows.filler(c, n) for c in
                               metadata.tables[target.table].primary_key}
                        key.update(project_id=project, **{target.column: at})
                        for bucket in range(3):
                            insert(conn, target.latency, n, **key, bucket=bucket)


@pytest.fixture
def projects(store: Store) -> dict[str, int]:
    with store.writer.begin() as conn:
        return {name: keys.ensure_project(conn, name) for name in ("shop", "billing")}


def policy(projects: dict[str, dict[str, int]] | None = None, batch_rows: int = 5000
           ) -> sweep.Policy:
    return sweep.Policy(KEEP, projects or {}, batch_rows)


def test_rows_past_each_setting_go_and_newer_stay(store: Store,
                                                  projects: dict[str, int]) -> None:
    shop = projects["shop"]
    # Each signal: one row just inside its setting, one just past it, one far past.
    for signal, targets in SWEPT_TABLES.items():
        kept = KEEP[signal]
        ages = [kept - 3600, kept + 3600, kept + 40 * DAY]
        with store.writer.begin() as conn:
            for target in targets:
                for n, age in enumerate(ages):
                    at = (NOW - age) * target.per_second
                    insert(conn, target.table, n, project_id=shop, **{target.column: at})
                    if target.latency:
                        key = {c.name: rows.filler(c, n) for c in
                               metadata.tables[target.table].primary_key}
                        key.update(project_id=shop, **{target.column: at})
                        for bucket in range(3):
                            insert(conn, target.latency, n, **key, bucket=bucket)
    outcome = sweep.sweep(store, policy(), "me", now_s=NOW)
    assert outcome.swept
    for signal, targets in SWEPT_TABLES.items():
        for target in targets:
            assert count(store, target.table, shop) == 1, target.table
            with store.reader.connect() as conn:
                left = conn.execute(sa.text(f'SELECT "{target.column}" FROM "{target.table}"')
                                    ).scalar_one()
            assert left == (NOW - KEEP[signal] + 3600) * target.per_second, target.table
            if target.latency:
                assert count(store, target.latency, shop) == 3, target.latency
    assert outcome.deleted["spans"] == 2 and outcome.deleted["request_latency"] == 6


def test_backlog_larger_than_a_batch_goes_in_several(store: Store,
                                                    projects: dict[str, int]) -> None:
    shop = projects["shop"]
    fill(store, shop, [DAY] + [400 * DAY + i for i in range(25)])
    outcome = sweep.sweep(store, policy(batch_rows=10), "me", now_s=NOW)
    for targets in SWEPT_TABLES.values():
        for target in targets:
            assert count(store, target.table, shop) == 1, target.table
    assert outcome.deleted["spans"] == 25 and outcome.deleted["request_rollups"] == 25
    assert outcome.deleted["request_latency"] == 75


def test_per_project_override_and_off(store: Store, projects: dict[str, int]) -> None:
    shop, billing = projects["shop"], projects["billing"]
    for project in (shop, billing):
        fill(store, project, [DAY, 3 * DAY, 20 * DAY, 1000 * DAY])
    overrides = {"shop": {"spans": 2 * DAY, "logs": 0}}
    sweep.sweep(store, policy(overrides), "me", now_s=NOW)
    assert count(store, "spans", shop) == 1  # 2 days: only the 1-day-old row
    assert count(store, "logs", shop) == 4  # off: kept for ever
    assert count(store, "metric_points", shop) == 2  # the default, 7 days
    assert count(store, "spans", billing) == 2 and count(store, "logs", billing) == 2
    assert count(store, "deploys", billing) == 3


def test_everything_off_deletes_nothing(store: Store, projects: dict[str, int]) -> None:
    fill(store, projects["shop"], [DAY, 5000 * DAY])
    outcome = sweep.sweep(store, sweep.Policy(dict.fromkeys(KEEP, 0)), "me",
                              now_s=NOW)
    assert outcome.swept and outcome.deleted == {}
    for targets in SWEPT_TABLES.values():
        for target in targets:
            assert count(store, target.table, projects["shop"]) == 2


def test_longest_setting_among_projects() -> None:
    p = policy({"a": {"spans": 30 * DAY}, "b": {"spans": DAY}})
    assert p.longest("spans") == 30 * DAY and p.longest("logs") == 7 * DAY
    assert policy({"a": {"logs": 0}}).longest("logs") == 0
    assert p.seconds("b", "spans") == DAY and p.seconds("zzz", "spans") == 7 * DAY


def test_time_units() -> None:
    assert {t.table: t.per_second for ts in SWEPT_TABLES.values() for t in ts} == {
        "spans": NS, "logs": NS, "metric_points": NS, "metric_exemplars": 1, "error_events": US,
        "request_rollups": 1, "metric_request_rollups": 1, "error_group_hourly": 1,
        "request_rollups_hourly": 1, "metric_request_rollups_hourly": 1, "deploys": US,
        "feedback": US, "session_rollups": 1, "session_users": 1, "session_marks": US,
        "cron_checkins": US,
        "operation_rollups": 1, "operation_rollups_hourly": 1, "edge_rollups": 1,
        "edge_rollups_hourly": 1, "usage_hourly": 1}
