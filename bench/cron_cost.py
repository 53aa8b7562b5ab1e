"""What the cron checker (storage/crons/checker.py) costs with MONITORS monitors on a
fresh SQLite file (or the URL given): the minimum of RUNS turns of each case.

- idle: a turn with nothing due (every monitor checked in, none late): what every
  collector's checker costs every `check_every_s`, whatever the number of monitors;
- missed: a turn in which 100 monitors are past their margin (100 missed check-ins,
  100 incidents, 100 alert facts);
- check-ins: a turn applying 1,000 new check-ins (ok runs of 1,000 monitors);
- first: the turn that made the monitors from their first check-ins (one run).

    PYTHONPATH=. python -m bench crons [MONITORS] [URL]

Results: bench/RESULTS.md, "Cron checker".
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from model.records import Batch, CheckIn
from storage import keys
from storage.crons.checker import Checker
from storage.store import Store
from storage.wire.batch import write_batches

T0 = 1_795_168_800_000_000  # 2026-11-20T10:00:00Z
MIN = 60_000_000
RUNS = 7
HOURLY = {"schedule_type": "interval", "schedule": "1", "unit": "hour", "checkin_margin": 5,
          "max_runtime": 30, "timezone": "UTC", "failure_issue_threshold": 1,
          "recovery_threshold": 1}


def best(fn: Callable[[], Any], before: Callable[[], Any] | None = None,
         runs: int = RUNS) -> float:
    """The fastest of `runs` calls of `fn`, in ms; `before` prepares each, untimed."""
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return min(samples)


def main(argv: list[str]) -> int:
    monitors = int(argv[0]) if argv and argv[0].isdigit() else 10_000
    url = next((a for a in argv if "://" in a), f"sqlite:///{tempfile.mkdtemp()}/crons.db")
    store = Store(url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "bench")
    checker = Checker(store, "bench")

    def send(check_ins: list[CheckIn]) -> None:
        with store.writer.begin() as conn:
            for first in range(0, len(check_ins), 1000):
                write_batches(conn, [Batch(project, check_ins=check_ins[first:first + 1000])],
                              T0)

    send([CheckIn(f"{i:032x}", f"job-{i}", "ok", T0, duration_s=1.0, monitor_config=HOURLY)
          for i in range(monitors)])
    started = time.perf_counter()
    checker.run(T0 + MIN)
    first_ms = (time.perf_counter() - started) * 1000
    idle_ms = best(lambda: checker.run(T0 + 10 * MIN))

    late = sa.text("UPDATE cron_monitors SET next_expected_us = :t, incident_id = NULL, "
                   "failures = 0 WHERE id <= 100")
    turns = [0]

    def make_late() -> None:
        # A new expected time each turn, so that its missed check-ins have new keys.
        turns[0] += 1
        with store.writer.begin() as conn:
            conn.execute(late, {"t": T0 + 20 * MIN + turns[0]})

    def turn_late() -> None:
        report = checker.run(T0 + 30 * MIN)
        assert report.missed == 100, report
    missed_ms = best(turn_late, make_late)
    runs = [0]

    def new_check_ins() -> None:
        runs[0] += 1
        send([CheckIn(f"{runs[0]:08x}{i:024x}", f"job-{i}", "ok", T0 + 40 * MIN + runs[0],
                      duration_s=2.0) for i in range(1000)])
    applied_ms = best(lambda: checker.run(T0 + 41 * MIN), new_check_ins)
    store.dispose()
    print(f"cron checker, {monitors:,} monitors ({store.dialect}), fastest of {RUNS} turns:")
    print(f"  idle turn (nothing due)            {idle_ms:9.2f} ms")
    print(f"  100 missed check-ins               {missed_ms:9.2f} ms "
          f"({missed_ms * 10:.0f} µs per missed check-in)")
    print(f"  1,000 check-ins applied            {applied_ms:9.2f} ms "
          f"({applied_ms:.0f} µs per check-in)")
    print(f"  first turn, {monitors:,} monitors made   {first_ms:9.0f} ms (one run)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
