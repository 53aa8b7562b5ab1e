"""One sweeper at a time (storage/retention/leases.py, storage/retention/sweep.py), on SQLite and
PostgreSQL, with two real stores on one database as two collectors have."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from storage import keys
from storage.retention import leases
from storage.retention import sweep as retention
from storage.store import Store
from tests.support import rows

NOW = 1_795_168_800
DAY = 86400
KEEP = {"spans": 7 * DAY, "logs": 7 * DAY, "metric_points": 7 * DAY,
        "error_occurrences": 30 * DAY, "rollups": 90 * DAY, "deploys": 365 * DAY,
        "check_ins": 30 * DAY}
S = 1_000_000  # µs


@pytest.fixture
def second(db_url: str, store: Store) -> Iterator[Store]:
    other = Store(db_url)
    yield other
    other.dispose()


def old_spans(store: Store, n: int) -> None:
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "shop")
        rows.insert(conn, "spans", [rows.row("spans", i, project_id=project,
                                             start_ns=(NOW - 30 * DAY) * 10**9 + i)
                                    for i in range(n)])


def spans(store: Store) -> int:
    with store.reader.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM spans")).scalar_one())


def test_a_held_lease_is_refused_until_released_or_expired(store: Store, second: Store) -> None:
    now = int(time.time() * S)
    assert leases.take(store, "work", "a", now, 60 * S)
    assert not leases.take(second, "work", "b", now, 60 * S)
    assert leases.take(store, "work", "a", now, 60 * S)  # the holder renews it
    leases.release(store, "work", "a")
    assert leases.take(second, "work", "b", now, 60 * S)
    assert leases.holder_of(store, "work") == ("b", now + 60 * S)
    # Expired: anyone may take it, and the old holder's renewal then fails.
    assert leases.take(store, "work", "a", now + 61 * S, 60 * S)
    with second.writer.begin() as conn:
        assert not leases.renew(conn, "work", "b", now + 62 * S, 60 * S)


def test_a_collector_finding_the_lease_taken_does_not_sweep(store: Store,
                                                             second: Store) -> None:
    old_spans(store, 20)
    assert leases.take(store, retention.LEASE, "other", int(time.time() * S), 60 * S)
    outcome = retention.sweep(second, retention.Policy(KEEP), "me", now_s=NOW)
    assert not outcome.swept and spans(store) == 20
    leases.release(store, retention.LEASE, "other")
    assert retention.sweep(second, retention.Policy(KEEP), "me", now_s=NOW).swept
    assert spans(store) == 0


def test_two_collectors_sweeping_at_once_one_sweeps(store: Store, second: Store) -> None:
    old_spans(store, 400)
    policy = retention.Policy(KEEP, batch_rows=5)  # 80 batches: long enough to overlap
    barrier = threading.Barrier(2)
    outcomes: dict[str, retention.SweepReport] = {}

    def sweep(name: str, which: Store) -> None:
        barrier.wait()
        outcomes[name] = retention.sweep(which, policy, name, now_s=NOW)
    threads = [threading.Thread(target=sweep, args=("a", store)),
               threading.Thread(target=sweep, args=("b", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(o.swept for o in outcomes.values()) == [False, True]
    assert sum(o.deleted.get("spans", 0) for o in outcomes.values()) == 400
    assert spans(store) == 0


def test_a_sweeper_whose_lease_was_taken_over_stops(store: Store, second: Store) -> None:
    old_spans(store, 50)
    policy = retention.Policy(KEEP, batch_rows=5)
    run = retention.Sweep(store, policy, "slow", NOW)
    assert leases.take(store, retention.LEASE, "slow", int(time.time() * S), 60 * S)
    # Another collector takes it over as if ours had expired.
    with second.writer.begin() as conn:
        conn.execute(sa.text("UPDATE maintenance_leases SET holder = 'other', "
                             "expires_us = :u"), {"u": int(time.time() * S) + 60 * S})
    run.outcome.swept = True
    with pytest.raises(retention.LeaseLost):
        run._batches(lambda conn: 1)
    assert spans(store) == 50
