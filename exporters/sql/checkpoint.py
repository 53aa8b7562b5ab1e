"""Checkpoints of the SQLite write-ahead log, in the writer process, and the bound
on the log's size.

Left to SQLite, a checkpoint runs inside whichever commit crosses 1,000 pages, and
the requests of that commit wait for it. Here it runs once a second in its own
thread on its own connection: a checkpoint is one long call into SQLite that
releases the interpreter lock, so the writer keeps writing meanwhile, and a page
changed by many commits within the second is copied once.

A passive checkpoint never makes the log start over, though: the log can start
over only when everything in it has been copied back and no reader still reads
from it, and a writer that writes non-stop always adds frames while the copy runs.
At 49,000 spans/s the -wal file grew by 110 MB/s for as long as the load lasted
(issue 9, finding 13). So the log is bounded by its size: once the file is past
`max_bytes`, a passive checkpoint copies what it can while the writer goes on,
then the writer is held between two commits while a TRUNCATE checkpoint copies the
few frames added meanwhile and empties the file. TRUNCATE rather than RESTART: an
emptied file's size is what the log holds, so the size alone says when to act (after
a RESTART the file keeps its length until some later commit cuts it back).

A TRUNCATE must also wait for readers still reading old frames (the dashboard's
queries; new readers do not count, they read the database file), and for the write
lock when another collector shares the file. It waits at most `WAIT_MS` per lock,
then gives up; the writer goes on, the log keeps growing, and the bound is tried
again soon, then less and less often (runtime/retry.py's backoff, from `POLL` up to
`RETRY` seconds). Soon, because what usually holds it up is brief: the collector's
own transactions (usage counts, leases, the cron checker), which on a loaded machine
outlast `WAIT_MS` when their process is not scheduled; a fixed second's wait after
each let the log grow for that second at full write rate (the likely cause of a
12.7 MiB log against a 4 MiB bound in a loaded test run, with no reader but the
collector's own). Less often, so that a long reader does not hold the writer
`WAIT_MS` in every `POLL`. A reader that keeps one snapshot open for a minute lets
the log grow for that minute (SQLite cannot reuse frames a reader may still need),
and the log is emptied within `RETRY` seconds of its end.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from runtime.retry import Backoff

log = logging.getLogger("sounding.writer")

MIB = 1024 * 1024


class Checkpointer(threading.Thread):
    INTERVAL = 1.0  # seconds between passive checkpoints
    POLL = 0.05  # seconds between looks at the log's size: ~20 stat calls a second
    # The longest a TRUNCATE waits for one lock (the write lock, then each reader's),
    # so the writer is held for a fraction of a second at most, even behind a reader.
    WAIT_MS = 250
    RETRY = 1.0  # the longest wait, in seconds, before a TRUNCATE that gave up is retried

    def __init__(self, path: str, max_bytes: int) -> None:
        super().__init__(name="sounding-checkpoint", daemon=True)
        self.path = path
        self.wal = path + "-wal"
        self.max_bytes = max_bytes  # 0: no bound on the log's size
        self.stopping = threading.Event()
        # The writer's commits and a TRUNCATE exclude each other. `_open` is cleared
        # first so that the writer starts no new commit: waiting on the lock alone,
        # the TRUNCATE could lose to a writer that takes it again at once.
        self._open = threading.Event()
        self._open.set()
        self._writing = threading.Lock()
        self._over_since = 0.0  # when a TRUNCATE first gave up; 0 while the bound holds
        self._retry = Backoff(self.POLL, self.RETRY)  # after each TRUNCATE that gave up
        self._largest = 0  # the largest the log grew meanwhile

    @contextmanager
    def commit(self) -> Iterator[None]:
        """Around each of the writer's transactions: waits while the log is emptied."""
        self._open.wait()
        with self._writing:
            yield

    def run(self) -> None:
        conn: sqlite3.Connection | None = None
        next_passive = time.monotonic() + self.INTERVAL
        retry_at = 0.0
        while not self.stopping.wait(self.POLL):
            now = time.monotonic()
            size = self._wal_bytes() if self.max_bytes and now >= retry_at else 0
            over = size > self.max_bytes
            if not over and now < next_passive:
                continue
            try:
                if conn is None:
                    conn = sqlite3.connect(self.path, timeout=self.WAIT_MS / 1000,
                                           isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                next_passive = now + self.INTERVAL
                if over and not self._truncate(conn, size):
                    retry_at = time.monotonic() + self._retry.next()
            except sqlite3.Error as exc:
                log.warning("checkpoint failed: %s", exc)
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def _wal_bytes(self) -> int:
        try:
            return os.stat(self.wal).st_size
        except OSError:
            return 0

    def _truncate(self, conn: sqlite3.Connection, size: int) -> bool:
        """Empty the log, holding the writer; whether it could be done now."""
        self._open.clear()
        try:
            with self._writing:
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            self._open.set()
        self._largest = max(self._largest, size)
        if busy:
            # Said once when the bound stops holding and once when it holds again,
            # not once a second while a reader keeps its snapshot.
            if not self._over_since:
                self._over_since = time.monotonic()
                log.warning("the write-ahead log is %.0f MiB, past its bound of %.0f MiB: "
                            "a reader is still on older frames (or another writer holds the "
                            "lock); trying again, at least every %.0f s",
                            size / MIB, self.max_bytes / MIB, self.RETRY)
            return False
        self._retry.reset()
        if self._over_since:
            log.warning("the write-ahead log is back under its bound after %.1f s; it "
                        "reached %.0f MiB", time.monotonic() - self._over_since,
                        self._largest / MIB)
            self._over_since = 0.0
        self._largest = 0
        return True

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)
