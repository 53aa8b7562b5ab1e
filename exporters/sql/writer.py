"""The writer process: one per SQL exporter, the only writer of ingested records.

It runs apart from the collector's event loop so that writing and decoding use
both cores without fighting over one interpreter lock (a writer thread that
gives the lock up inside the driver for every row waits up to the switch
interval to get it back whenever the event loop is busy, which made it ten times
slower under load). The exporter hands it batches over a socket pair; it takes
everything waiting (up to `max_commit_records`), writes it in one transaction,
and answers with the sequence numbers it committed. Only then are the clients
answered 202.

Messages travel over runtime/channel.py. Started as
`python -m exporters.sql.writer FD`; the first message is its configuration. It
ignores SIGINT and SIGTERM (the collector stops it once the receivers have
drained) and exits on a `drain` message or when the collector's end of the
socket closes, after committing what it had received. In a serve group it is the
one writer of every worker (runtime/group.py): they connect to the socket the
leader hands it as `listen_fd`.
"""

from __future__ import annotations

import gc
import logging
import pickle
import select
import signal
import socket
import sqlite3
import sys
import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from exporters.sql.checkpoint import Checkpointer
from runtime import channel, logsetup
from storage import sqlite
from storage.writer.commit import BatchWriter, WireBatch
from storage.writer.detect import MAX_FACTS, FindingsWriter, findings_batches, findings_of

log = logging.getLogger("sounding.writer")

def _unavailable_errors(dialect: str) -> tuple[type[BaseException], ...]:
    """Errors of the connection or of lock contention: retryable, not the data's fault."""
    if dialect == "postgresql":
        import psycopg  # only here: the SQLite writer does without it

        return (psycopg.OperationalError, psycopg.InterfaceError)
    return (sqlite3.OperationalError, sqlite3.InterfaceError)


class Database:
    """One long-lived connection (its page cache is what makes inserts cheap), opened
    again after a failure."""

    def __init__(self, dialect: str, target: str, sqlite_synchronous: str,
                 sqlite_cache_kib: int, sqlite_wal_max_bytes: int) -> None:
        self.dialect = dialect
        self.target = target  # the SQLite file, or a libpq connection URL
        self.synchronous = sqlite_synchronous
        self.cache_kib = sqlite_cache_kib
        self.wal_max_bytes = sqlite_wal_max_bytes
        self.unavailable = _unavailable_errors(dialect)
        self.conn: Any = None

    def _connect(self) -> Any:
        if self.dialect == "sqlite":
            conn = sqlite3.connect(self.target, timeout=30, isolation_level=None,
                                   check_same_thread=False)
            sqlite.apply_pragmas(conn, self.synchronous)
            # Its own: a page cache for the one long-lived writing connection.
            conn.execute(f"PRAGMA cache_size=-{self.cache_kib}")
            # Checkpoints run in the Checkpointer thread, off the commit path
            # (exporters/sql/checkpoint.py). When the log starts over by itself (a
            # checkpoint caught up with an idle writer), the file is cut back to the
            # bound too (to 64 MiB when there is none).
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.execute(f"PRAGMA journal_size_limit={self.wal_max_bytes or 64 * 1024 * 1024}")
            return conn
        import psycopg

        return psycopg.connect(self.target, connect_timeout=3, autocommit=False)

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - it is being thrown away
                pass

    def transaction(self, writer: BatchWriter | FindingsWriter, batches: list[WireBatch]
                    ) -> None:
        """Write and commit; a connection that went stale while idle is replaced once."""
        fresh = self.conn is None
        try:
            self._write(writer, batches)
        except self.unavailable:
            self.close()
            if fresh:
                raise
            self._write(writer, batches)

    def _write(self, writer: BatchWriter | FindingsWriter, batches: list[WireBatch]) -> None:
        if self.conn is None:
            self.conn = self._connect()
        conn = self.conn
        cursor = conn.cursor()
        try:
            if self.dialect == "sqlite":
                # IMMEDIATE: queue on the write lock now rather than fail to upgrade later.
                cursor.execute("BEGIN IMMEDIATE")
            writer.write(cursor, batches, int(time.time() * 1_000_000))
            conn.commit() if self.dialect != "sqlite" else cursor.execute("COMMIT")
            writer.committed()
        except BaseException:
            try:
                if self.dialect == "sqlite":
                    if conn.in_transaction:
                        cursor.execute("ROLLBACK")
                else:
                    conn.rollback()
            except Exception:  # noqa: BLE001 - the connection is closed on the way out
                self.close()
            raise
        finally:
            try:
                cursor.close()
            except Exception:  # noqa: BLE001
                pass


Taken = tuple[socket.socket, int, int, WireBatch]  # from whom, seq, records, rows
SEND_TIMEOUT = 5.0  # a worker that does not read its answers this long is let go


class WriterLoop:
    """Commits what the collector sends; in a serve group (runtime/group.py) also
    what every worker sends over the connections it makes to `listen_fd`, all in the
    same group commits, each answered on its own connection."""

    def __init__(self, sock: socket.socket, config: dict[str, Any]) -> None:
        self.sock = sock
        self.max_commit = int(config["max_commit_records"])
        self.db = Database(config["dialect"], config["target"], config["sqlite_synchronous"],
                           int(config["sqlite_cache_kib"]), int(config["sqlite_wal_max_bytes"]))
        self.writer = BatchWriter(self.db.dialect, float(config.get("trace_wait_s", 10.0)))
        self.checkpointer: Checkpointer | None = None
        if self.db.dialect == "sqlite" and self.db.target not in ("", ":memory:"):
            self.checkpointer = Checkpointer(self.db.target, self.db.wal_max_bytes)
        fd = config.get("listen_fd")
        self.listener = socket.socket(fileno=int(fd)) if fd is not None else None
        self.workers: list[socket.socket] = []

    def run(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.start()
        try:
            self._serve()
        finally:
            if self.checkpointer is not None:
                self.checkpointer.stop()
        self.db.close()
        for conn in self.workers:
            conn.close()
        self._send(self.sock, ("bye",))

    def _send(self, sock: socket.socket, message: tuple[Any, ...]) -> None:
        try:
            channel.send(sock, message)
        except OSError:
            # The collector is gone, or a worker stopped reading: what was committed
            # stays committed; a worker let go answers what it waited for 503.
            if sock is not self.sock:
                self._drop(sock)

    def _drop(self, conn: socket.socket) -> None:
        if conn in self.workers:
            self.workers.remove(conn)
            conn.close()

    def _receive(self, sock: socket.socket) -> list[channel.Item] | None:
        try:
            return channel.receive(sock)
        except OSError:
            return None

    def _readable(self, timeout: float | None) -> list[socket.socket]:
        sources = [self.sock, *self.workers]
        if self.listener is not None:
            sources.append(self.listener)
        return list(select.select(sources, [], [], timeout)[0])

    def _serve(self) -> None:
        self._send(self.sock, ("ready",))
        stopping = False
        while not stopping:
            taken: list[Taken] = []
            records = 0
            # Wake when the oldest trace held for the detectors is complete.
            ready = self._readable(self.writer.traces.seconds_to_next(time.monotonic()))
            while ready:
                for source in ready:
                    if source is self.listener:
                        self._accept()
                        continue
                    received = self._receive(source)
                    if received is None:
                        if source is self.sock:
                            stopping = True  # the collector is gone: commit, then exit
                        else:
                            self._drop(source)  # a worker stopped
                        continue
                    for message, payload in received:
                        if message[0] == "drain":
                            stopping = True
                            continue
                        _, seq, count = message
                        assert payload is not None
                        taken.append((source, seq, count, pickle.loads(payload)))
                        records += count
                # Take whatever else is already waiting, up to one commit's worth.
                if stopping or records >= self.max_commit:
                    break
                ready = self._readable(0)
            if taken:
                self._commit(taken)
            self._detect()

    def _detect(self) -> None:
        """Run the performance detectors over the traces now complete, and commit what
        they find in a transaction of its own: a client's batch never waits on it, nor
        fails with it (storage/writer/detect.py)."""
        watch = self.writer.traces
        if watch.facts_left_out:  # counted, and said (the log throttles repeats)
            log.warning("performance detectors: %d calls of traces past %d were left out",
                        watch.facts_left_out, MAX_FACTS)
            watch.facts_left_out = 0
        complete = watch.complete(time.monotonic())
        if not complete:
            return
        batches = findings_batches(findings_of(complete))
        if not batches:
            return
        try:
            with self._turn():
                self.db.transaction(FindingsWriter(self.writer), batches)
        except Exception:  # noqa: BLE001 - derived records: logged, the writer goes on
            log.exception("performance findings of %d traces were not stored", len(complete))

    def _accept(self) -> None:
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        conn.settimeout(SEND_TIMEOUT)
        self.workers.append(conn)
        self._send(conn, ("ready",))

    def _commit(self, taken: list[Taken]) -> None:
        started = time.perf_counter()
        try:
            with self._turn():
                self.db.transaction(self.writer, [wire for _, _, _, wire in taken])
        except Exception as exc:  # noqa: BLE001 - every failure is answered to its waiters
            if len(taken) > 1 and not isinstance(exc, self.db.unavailable):
                # One request's data broke the transaction: commit the others alone so
                # that one bad request does not fail its neighbours.
                for item in taken:
                    self._commit([item])
                return
            if isinstance(exc, self.db.unavailable):
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                log.warning("store unavailable, %d requests answered 503: %s", len(taken), first)
                outcome: tuple[str, str] | None = ("unavailable", first)
            else:
                log.exception("commit failed for %d requests", len(taken))
                outcome = ("failed", f"{type(exc).__name__}: {exc}")
            self._answer(taken, outcome, 0.0)
            return
        self._answer(taken, outcome=None, seconds=time.perf_counter() - started)

    def _turn(self) -> AbstractContextManager[None]:
        """The writer's turn to commit: the checkpointer may hold it to empty the log."""
        return self.checkpointer.commit() if self.checkpointer is not None else nullcontext()

    def _answer(self, taken: list[Taken], outcome: tuple[str, str] | None,
                seconds: float) -> None:
        """Each sender its own sequence numbers. The commit's duration and size go to
        the first only (None to the others), so that a commit shared by several
        workers is observed once in the group's /metrics."""
        by_sender: dict[socket.socket, list[int]] = {}
        for sender, seq, _, _ in taken:
            by_sender.setdefault(sender, []).append(seq)
        records: int | None = sum(count for _, _, count, _ in taken)
        duration: float | None = seconds
        for sender, seqs in by_sender.items():
            self._send(sender, ("done", seqs, outcome, duration, records))
            duration = records = None


# The writer allocates a few tuples per value it binds, nearly all freed at once by
# their reference counts: at Python's default (a young collection every 700 net
# allocations) the cycle collector took 7% of its CPU for metric points, walking its
# caches of series and states again and again (callgrind, bench/RESULTS.md, issue 23
# evening). Collected 30 times less often, with what start-up made set aside for good.
GC_THRESHOLDS = (20_000, 20, 20)


def collect_less() -> None:
    """The writer process's garbage collection: what exists now (modules, the
    configuration) is never scanned again, and young objects are collected rarely."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sock = socket.socket(fileno=int(argv[1]))
    config = channel.receive_config(sock)
    if config is None:
        return 0  # the collector stopped before it configured us
    logsetup.configure_from_env()  # as the collector logs (runtime/supervisor.py)
    collect_less()
    WriterLoop(sock, config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
