"""Error groups under retention (storage/retention/sweep.py), on SQLite and PostgreSQL: a
group whose last occurrence is past the setting goes with its hourly counts, facets
and status changes; a group still seen keeps its count, first seen, facets and
status history, shows only its retained occurrences, and is still reopened."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from model.records import Batch, ErrorEvent
from processors.grouping import GroupingProcessor
from processors.reopen import ReopenProcessor
from storage import keys
from storage.groups import status
from storage.retention import sweep as retention
from storage.store import Store
from storage.wire.batch import write_batches

NOW = 1_795_168_800  # epoch seconds
DAY, US = 86400, 1_000_000
KEEP = {"spans": 7 * DAY, "logs": 7 * DAY, "metric_points": 7 * DAY,
        "error_occurrences": 30 * DAY, "rollups": 90 * DAY, "deploys": 365 * DAY,
        "check_ins": 30 * DAY}


def at(days_ago: float) -> int:
    return int((NOW - days_ago * DAY) * US)


def error(fingerprint: str, ts_us: int, env: str = "prod") -> ErrorEvent:
    return ErrorEvent(fingerprint, f"Err{fingerprint}", "boom", ["f.py:1"], ts_us,
                      environment=env, service="shop", tags={"region": "eu"})


class Db:
    def __init__(self, store: Store) -> None:
        self.store = store
        with store.writer.begin() as conn:
            self.project = keys.ensure_project(conn, "shop")

    def send(self, *errors: ErrorEvent) -> None:
        batch = Batch(project_id=self.project, errors=list(errors))
        for processor in (GroupingProcessor("grouping"), ReopenProcessor("reopen")):
            batch = processor.process(batch)
        with self.store.writer.begin() as conn:
            write_batches(conn, [batch], at(0))

    def rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        with self.store.reader.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql), params)]

    def group(self, fingerprint: str) -> tuple[Any, ...] | None:
        found = self.rows("SELECT count, first_seen_us, last_seen_us, status, reopen_count "
                          "FROM error_groups WHERE fingerprint = :f", f=fingerprint)
        return found[0] if found else None

    def of(self, table: str, fingerprint: str) -> int:
        return int(self.rows(f"SELECT count(*) FROM {table} WHERE fingerprint = :f",
                             f=fingerprint)[0][0])

    def sweep(self, now_s: int = NOW) -> retention.SweepReport:
        return retention.sweep(self.store, retention.Policy(KEEP), "me", now_s=now_s)


@pytest.fixture
def db(store: Store) -> Db:
    return Db(store)


def test_a_group_past_retention_goes_with_what_is_its_own(db: Db) -> None:
    db.send(error("gone", at(40)), error("gone", at(35), env="staging"))
    status.set_status(db.store, db.project, "gone", "ignored", at_us=at(34))
    db.send(error("kept", at(2)))
    outcome = db.sweep()
    assert outcome.groups == 1 and db.group("gone") is None
    for table in ("error_events", "error_group_hourly", "error_group_facets",
                  "error_status_changes"):
        assert db.of(table, "gone") == 0, table
    assert db.group("kept") == (1, at(2), at(2), "open", 0)
    assert db.of("error_events", "kept") == 1 and db.of("error_group_facets", "kept") > 0


def test_a_group_still_seen_keeps_counts_history_and_reopens(db: Db) -> None:
    db.send(error("g", at(60)), error("g", at(45)), error("g", at(40), env="staging"))
    status.set_status(db.store, db.project, "g", "resolved", at_us=at(39))
    db.send(error("g", at(3)))  # a recurrence: reopened
    facets_before = db.rows("SELECT facet, value, count, first_seen_us, last_seen_us "
                            "FROM error_group_facets ORDER BY facet, value")
    hourly_before = db.rows("SELECT hour, count FROM error_group_hourly ORDER BY hour")
    history = db.rows("SELECT from_status, to_status, reason, at_us "
                      "FROM error_status_changes ORDER BY id")
    assert [h[:3] for h in history] == [("open", "resolved", "user"),
                                        ("resolved", "open", "recurrence")]
    outcome = db.sweep()
    assert outcome.deleted["error_events"] == 3 and outcome.groups == 0
    # Counts are of everything ever stored; the occurrence list shows what is kept.
    assert db.group("g") == (4, at(60), at(3), "open", 1)
    assert db.rows("SELECT ts_us FROM error_events") == [(at(3),)]
    assert db.rows("SELECT from_status, to_status, reason, at_us FROM error_status_changes "
                   "ORDER BY id") == history
    assert db.rows("SELECT facet, value, count, first_seen_us, last_seen_us "
                   "FROM error_group_facets ORDER BY facet, value") == facets_before
    assert db.rows("SELECT hour, count FROM error_group_hourly ORDER BY hour") == \
        hourly_before  # the rollups' 90 days: all kept
    # The reopen check still works on a group whose old occurrences are gone.
    status.set_status(db.store, db.project, "g", "resolved", at_us=at(1))
    db.send(error("g", at(0.5)))
    assert db.group("g") == (5, at(60), at(0.5), "open", 2)
    # A month on, its last occurrence is past the setting: the group goes.
    db.sweep(now_s=NOW + 31 * DAY)
    assert db.group("g") is None and db.of("error_group_hourly", "g") == 0


def test_a_group_seen_again_before_the_sweep_stays(db: Db) -> None:
    db.send(error("g", at(40)))
    db.send(error("g", at(1)))
    db.sweep()
    assert db.group("g") == (2, at(40), at(1), "open", 0)
    assert db.of("error_group_hourly", "g") == 2
