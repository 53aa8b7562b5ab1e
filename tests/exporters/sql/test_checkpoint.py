"""The SQLite write-ahead log stays bounded by its size under sustained writes
(issue 9, finding 13), and a reader holding an old snapshot delays the bound
without holding up ingest.

A passive checkpoint that keeps up never lets the log start over while the writer
writes non-stop, so before the bound the -wal file grew by everything written.
These tests send far more than the bound through the real server and watch the
file's size from outside, as a disk would see it.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from tests.exporters.senders import trace_request
from tests.support.server import Server

# Long (tests/conftest.py): sustained writes past the bound, ~45 s alone.
pytestmark = pytest.mark.long
BOUND = 4 * 1024 * 1024
SPANS = 256  # per request
# The log passes the bound by what the writer commits between the moment the file
# is seen past it and the moment it is emptied: the checkpointer looks every 50 ms,
# then copies what it can before it holds the writer. Measured here: 0.7 MiB over
# (1.2 bounds); twice the bound leaves room for a slow, shared machine.
HIGH_WATER = 2 * BOUND


class WalWatcher(threading.Thread):
    """Samples the size of the -wal file every few milliseconds."""

    def __init__(self, database: Path) -> None:
        super().__init__(daemon=True)
        self.path = Path(f"{database}-wal")
        self.stopping = threading.Event()
        self.high_water = 0
        self.samples: list[int] = []

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def run(self) -> None:
        while not self.stopping.wait(0.005):
            size = self.size()
            self.samples.append(size)
            self.high_water = max(self.high_water, size)

    def stop(self) -> None:
        self.stopping.set()
        self.join(5)


class Writers:
    """Threads posting 256-span trace requests; each remembers its acknowledged traces."""

    def __init__(self, server: Server, threads: int = 4) -> None:
        self.server = server
        self.stopping = threading.Event()
        self.acked: list[str] = []
        self.statuses: dict[int, int] = {}
        self.slowest = 0.0
        self.threads = [threading.Thread(target=self._send, daemon=True) for _ in range(threads)]
        for thread in self.threads:
            thread.start()

    def _send(self) -> None:
        session = requests.Session()
        headers = {"Authorization": f"Bearer {self.server.key}",
                   "Content-Type": "application/x-protobuf"}
        while not self.stopping.is_set():
            trace = uuid.uuid4().hex
            started = time.monotonic()
            response = session.post(self.server.base + "/ingest/v1/traces",
                                    data=trace_request(bytes.fromhex(trace), spans=SPANS),
                                    headers=headers, timeout=30)
            self.slowest = max(self.slowest, time.monotonic() - started)
            self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
            if response.status_code == 202:
                self.acked.append(trace)
        session.close()

    def until(self, done: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"not done in {timeout} s: {self.statuses}"
            time.sleep(0.02)

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(30)

    def assert_all_stored(self) -> None:
        stored = self.server.spans_per_trace()
        missing = [t for t in self.acked if stored.get(t) != SPANS]
        assert not missing, f"{len(missing)} of {len(self.acked)} acknowledged requests missing"


def _start(start: Callable[..., Server], sqlite_url: str) -> tuple[Server, Path]:
    server = start(sqlite_url, env={"SOUNDING__STORAGE__SQLITE_WAL_MAX_BYTES": str(BOUND)})
    return server, Path(sqlite_url.removeprefix("sqlite:///"))


def test_the_log_stays_under_its_bound_under_sustained_writes(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server, database = _start(start, sqlite_url)
    watcher = WalWatcher(database)
    watcher.start()
    writers = Writers(server)
    try:
        # Everything written passes through the log, most pages many times over:
        # unless the log starts over it grows past the database itself.
        writers.until(lambda: database.stat().st_size > 6 * BOUND, timeout=60)
    finally:
        writers.stop()
        watcher.stop()
    assert writers.acked and set(writers.statuses) == {202}, writers.statuses
    assert watcher.high_water <= HIGH_WATER, (
        f"the -wal file reached {watcher.high_water / 2**20:.1f} MiB "
        f"with a bound of {BOUND / 2**20:.0f} MiB; the writer said: "
        f"{[line for line in server.log().splitlines() if 'its bound' in line]}")
    # And it really started over many times, rather than being cut once.
    shrinks = sum(1 for a, b in itertools.pairwise(watcher.samples) if b < a)
    assert shrinks >= 5, shrinks
    writers.assert_all_stored()


def test_a_reader_holding_a_snapshot_delays_the_bound_not_ingest(
        start: Callable[..., Server], sqlite_url: str) -> None:
    """While a reader keeps an old snapshot the log cannot start over (SQLite would
    overwrite pages that reader still needs): the checkpointer waits for it only
    briefly, lets the writer go on, and tries again; once the reader is done the
    log comes back under its bound."""
    server, database = _start(start, sqlite_url)
    watcher = WalWatcher(database)
    watcher.start()
    writers = Writers(server)
    reader = sqlite3.connect(database, isolation_level=None)
    try:
        writers.until(lambda: len(writers.acked) >= 4, timeout=60)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM spans").fetchone()  # the snapshot is taken here
        writers.until(lambda: watcher.size() > 3 * BOUND, timeout=60)
        acked_while_reading = len(writers.acked)
        writers.until(lambda: len(writers.acked) >= acked_while_reading + 8, timeout=30)
        reader.execute("COMMIT")
        writers.stop()  # idle from here on: the bound must hold without further commits
        deadline = time.monotonic() + 10
        while watcher.size() > BOUND:
            assert time.monotonic() < deadline, (
                f"the -wal file stayed at {watcher.size() / 2**20:.1f} MiB after the reader "
                f"finished")
            time.sleep(0.05)
    finally:
        reader.close()
        writers.stop()
        watcher.stop()
    # Ingest went on all along: the writer was held for bounded waits only.
    assert set(writers.statuses) == {202}, writers.statuses
    assert writers.slowest < 10, writers.slowest
    writers.assert_all_stored()
    # Said once when the bound stopped holding and once when it held again.
    log = server.wait_for_log("back under its bound")
    assert log.count("past its bound") == 1 and log.count("back under its bound") == 1, log
