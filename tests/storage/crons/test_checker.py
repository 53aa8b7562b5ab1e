"""The cron checker (storage/crons/checker.py) on SQLite and PostgreSQL, with the
clock handed to each turn: check-ins written by the real writer
(storage/wire/batch.write_batches), states, missed check-ins and timeouts,
incidents opening and resolving at their thresholds, and each alert fact once."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from model import cron
from model.records import Batch, CheckIn
from storage import keys
from storage.crons.checker import LEASE, Checker, missed_id
from storage.retention import leases
from storage.store import Store
from storage.wire.batch import write_batches

MIN = cron.MINUTE_US
T0 = 1_795_168_800_000_000  # 2026-11-20T10:00:00Z, a minute's start
EVERY_MINUTE = {"schedule_type": "interval", "schedule": "1", "unit": "minute",
                "checkin_margin": 1, "max_runtime": 2, "timezone": "UTC",
                "failure_issue_threshold": 1, "recovery_threshold": 1}


@pytest.fixture
def project(store: Store) -> int:
    with store.writer.begin() as conn:
        return keys.ensure_project(conn, "shop")


def send(store: Store, project: int, *check_ins: CheckIn) -> None:
    with store.writer.begin() as conn:
        write_batches(conn, [Batch(project, check_ins=list(check_ins))], T0)


def check_in(run: str, status: str, at_us: int, config: dict[str, Any] | None = None,
             **fields: Any) -> CheckIn:
    return CheckIn(check_in_id=run.ljust(32, "0"), monitor_slug="nightly", status=status,
                   ts_us=at_us, monitor_config=config, **fields)


def query(store: Store, sql: str) -> list[tuple[Any, ...]]:
    with store.reader.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(sql))]


def monitor(store: Store) -> tuple[Any, ...]:
    (row,) = query(store, "SELECT status, next_expected_us, failures, successes, incident_id "
                          "FROM cron_monitors")
    return row


def facts(store: Store) -> list[str]:
    return [kind for (kind,) in query(store, "SELECT kind FROM alert_facts ORDER BY id")]


def test_a_run_on_time_then_failed_then_missed_then_ok(store: Store, project: int) -> None:
    checker = Checker(store, "one")
    send(store, project, check_in("a", "in_progress", T0 + 5 * US, EVERY_MINUTE))
    assert checker.run(T0 + 6 * US).applied == 1
    assert monitor(store)[:2] == ("in_progress", T0 + MIN)
    send(store, project, check_in("a", "ok", T0 + 9 * US, EVERY_MINUTE, duration_s=4.0))
    checker.run(T0 + 10 * US)
    assert monitor(store)[:4] == ("ok", T0 + MIN, 0, 1)
    assert query(store, "SELECT status, duration_s, finished_us FROM cron_checkins") == [
        ("ok", 4.0, T0 + 9 * US)]
    # Fails in the next minute: an incident, one cron_failed.
    send(store, project, check_in("b", "error", T0 + MIN + 3 * US, duration_s=1.0))
    report = checker.run(T0 + MIN + 4 * US)
    assert (report.opened, report.facts) == (1, ["cron_failed"])
    assert monitor(store)[:3] == ("error", T0 + 2 * MIN, 1)
    # Then nothing: missed once the margin after T0+2min has passed, not before.
    assert checker.run(T0 + 3 * MIN).missed == 0
    report = checker.run(T0 + 3 * MIN + 1)
    assert (report.missed, report.opened, report.facts) == (1, 0, ["cron_missed"])
    assert monitor(store)[:3] == ("missed", T0 + 3 * MIN, 2)
    assert checker.run(T0 + 3 * MIN + 2 * US).missed == 0  # one per expected time
    # The next expected time is missed too: same incident, no second alert.
    assert checker.run(T0 + 4 * MIN + 1).facts == []
    # Runs again: resolved, one cron_recovered.
    send(store, project, check_in("c", "ok", T0 + 4 * MIN + 30 * US))
    report = checker.run(T0 + 4 * MIN + 31 * US)
    assert (report.resolved, report.facts) == (1, ["cron_recovered"])
    assert monitor(store)[0] == "ok" and monitor(store)[4] is None
    assert facts(store) == ["cron_failed", "cron_missed", "cron_recovered"]
    assert query(store, "SELECT reason, resolved_us FROM cron_incidents") == [
        ("error", T0 + 4 * MIN + 31 * US)]
    statuses = query(store, "SELECT status FROM cron_checkins ORDER BY ts_us")
    assert [s for (s,) in statuses] == ["ok", "error", "missed", "missed", "ok"]


def test_thresholds_open_and_resolve_after_so_many_in_a_row(store: Store,
                                                              project: int) -> None:
    config = {**EVERY_MINUTE, "failure_issue_threshold": 2, "recovery_threshold": 2}
    checker = Checker(store, "one")
    send(store, project, check_in("a", "error", T0, config))
    assert checker.run(T0 + US).opened == 0
    send(store, project, check_in("b", "ok", T0 + 10 * US), check_in("c", "error", T0 + 20 * US))
    assert checker.run(T0 + 21 * US).opened == 0  # the ok broke the row
    send(store, project, check_in("d", "error", T0 + 30 * US))
    assert checker.run(T0 + 31 * US).facts == ["cron_failed"]
    send(store, project, check_in("e", "ok", T0 + 40 * US))
    assert checker.run(T0 + 41 * US).resolved == 0
    send(store, project, check_in("f", "ok", T0 + 50 * US))
    assert checker.run(T0 + 51 * US).facts == ["cron_recovered"]


def test_a_run_past_max_runtime_times_out_and_stays_so(store: Store, project: int) -> None:
    checker = Checker(store, "one")
    every_five = {**EVERY_MINUTE, "schedule": "5"}
    send(store, project, check_in("a", "in_progress", T0, every_five))
    checker.run(T0 + US)
    assert checker.run(T0 + 2 * MIN).timeouts == 0
    report = checker.run(T0 + 2 * MIN + 1)
    assert (report.timeouts, report.facts) == (1, ["cron_failed"])
    send(store, project, check_in("a", "ok", T0 + 3 * MIN, duration_s=180.0))  # too late
    checker.run(T0 + 3 * MIN + 1)
    assert query(store, "SELECT status FROM cron_checkins") == [("timeout",)]
    assert monitor(store)[0] == "timeout"


def test_a_check_in_without_an_id_finishes_the_latest_run(store: Store, project: int) -> None:
    checker = Checker(store, "one")
    # Both in one turn: the run's processed mark does not undo its duration.
    send(store, project, CheckIn("a" * 32, "other", "in_progress", T0, latest=True),
         CheckIn("b" * 32, "other", "ok", T0 + 3 * US, latest=True))
    checker.run(T0 + 4 * US)
    assert query(store, "SELECT check_in_id, status, duration_s FROM cron_checkins") == [
        ("a" * 32, "ok", 3.0)]
    with store.writer.begin() as conn:
        conn.execute(sa.text("DELETE FROM cron_checkins"))
    send(store, project, CheckIn("1" * 32, "nightly", "in_progress", T0, latest=True,
                                 monitor_config=EVERY_MINUTE))
    checker.run(T0 + US)
    send(store, project, CheckIn("2" * 32, "nightly", "ok", T0 + 7 * US, latest=True))
    checker.run(T0 + 8 * US)
    assert query(store, "SELECT check_in_id, status, duration_s FROM cron_checkins") == [
        ("1" * 32, "ok", 7.0)]


def test_an_outage_records_one_missed_check_in(store: Store, project: int) -> None:
    checker = Checker(store, "one")
    send(store, project, check_in("a", "ok", T0, EVERY_MINUTE))
    checker.run(T0 + US)
    report = checker.run(T0 + 60 * MIN)
    assert report.missed == 1
    (expected,) = query(store, "SELECT next_expected_us FROM cron_monitors")[0]
    assert expected + MIN > T0 + 60 * MIN  # not missed again at once


def test_only_the_lease_holder_checks_and_nothing_is_stored_twice(store: Store,
                                                                   project: int) -> None:
    first, second = Checker(store, "one"), Checker(store, "two")
    send(store, project, check_in("a", "ok", T0, EVERY_MINUTE))
    assert first.run(T0 + US).held
    assert not second.run(T0 + US).held
    # Were the second to run the same turn (the lease lost mid-turn), the keys hold:
    leases.release(store, LEASE, "one")
    assert first.run(T0 + 3 * MIN).missed == 1
    with store.writer.begin() as conn:  # the first turn's state, as the second saw it
        conn.execute(sa.text("UPDATE cron_monitors SET next_expected_us = :t, failures = 0, "
                             "incident_id = NULL, status = 'ok'"), {"t": T0 + MIN})
    leases.release(store, LEASE, "one")
    report = second.run(T0 + 3 * MIN)
    assert report.held and report.missed == 0 and report.facts == []
    assert query(store, "SELECT count(*) FROM cron_checkins WHERE status = 'missed'") == [(1,)]
    (monitor_id,) = query(store, "SELECT id FROM cron_monitors")[0]
    assert query(store, "SELECT check_in_id FROM cron_checkins WHERE status = 'missed'") == [
        (missed_id(monitor_id, T0 + MIN),)]
    assert facts(store) == ["cron_missed"]


class FinishedMidTurn(Checker):
    """A checker whose turn, once it has read a run in progress, sees the writer commit
    that run's end before it marks the run applied: what a collector's writer does on
    PostgreSQL when a job's two check-ins come a checker turn apart."""

    def __init__(self, store: Store, project: int, end: CheckIn) -> None:
        super().__init__(store, "one")
        self.project, self.end = project, end

    def _check_in(self, conn: Any, state: Any, row: Any, now: int, report: Any) -> Any:
        if row.status == "in_progress" and self.end is not None:
            end, self.end = self.end, None
            send(self.store, self.project, end)  # another connection, committed
        return super()._check_in(conn, state, row, now, report)


@pytest.mark.postgres
def test_a_run_finished_while_a_turn_reads_it_is_applied_by_the_next(pg_url: str) -> None:
    store = Store(pg_url)
    try:
        with store.writer.begin() as conn:
            project = keys.ensure_project(conn, "shop")
        send(store, project, check_in("a", "in_progress", T0 + 5 * US, EVERY_MINUTE))
        checker = FinishedMidTurn(store, project,
                                  check_in("a", "error", T0 + 9 * US, duration_s=4.0))
        checker.run(T0 + 10 * US)
        # The turn applied the run as it read it (in progress) and left its end unmarked.
        assert query(store, "SELECT status, processed FROM cron_checkins") == [("error", 0)]
        report = checker.run(T0 + 11 * US)
        assert (report.applied, report.opened, report.facts) == (1, 1, ["cron_failed"])
        assert monitor(store)[:3] == ("error", T0 + MIN, 1)
    finally:
        store.dispose()


def test_a_crontab_in_a_timezone(store: Store, project: int) -> None:
    config = {**EVERY_MINUTE, "schedule_type": "crontab", "schedule": "30 9 * * *",
              "unit": None, "timezone": "Europe/Riga"}
    send(store, project, check_in("a", "ok", T0, config))
    Checker(store, "one").run(T0 + US)
    # 10:00 UTC is 12:00 in Riga (EET): the next 09:30 there is 07:30 UTC tomorrow.
    assert monitor(store)[1] == T0 + (21 * 60 + 30) * MIN


US = 1_000_000
