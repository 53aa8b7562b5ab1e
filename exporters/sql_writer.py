"""The writer process: one per SQL exporter, the only writer of ingested records.

It runs apart from the collector's event loop so that writing and decoding use
both cores without fighting over one interpreter lock (a writer thread that
gives the lock up inside the driver for every row waits up to the switch
interval to get it back whenever the event loop is busy, which made it ten times
slower under load). The exporter hands it batches over a socket pair; it takes
everything waiting (up to `max_commit_records`), writes it in one transaction,
and answers with the sequence numbers it committed. Only then are the clients
answered 202.

Frames both ways are length-prefixed pickles (`multiprocessing.connection`
framing). Started as `python -m exporters.sql_writer FD`; the first frame is its
configuration. It ignores SIGINT and SIGTERM (the collector stops it once the
receivers have drained) and exits on a `drain` frame or when the collector's end
of the socket closes, after committing what it had received.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import socket
import sqlite3
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from sqlalchemy.engine import make_url

from storage.writer import BatchWriter, WireBatch

log = logging.getLogger("sounding.writer")

# Errors of the connection or of lock contention: retryable, not the data's fault.
_UNAVAILABLE: tuple[type[BaseException], ...] = (sqlite3.OperationalError,
                                                 sqlite3.InterfaceError)
try:
    import psycopg

    _UNAVAILABLE += (psycopg.OperationalError, psycopg.InterfaceError)
except ImportError:  # pragma: no cover - psycopg is a dependency
    psycopg = None  # type: ignore[assignment]


def is_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, _UNAVAILABLE)


class Database:
    """One long-lived connection (its page cache is what makes inserts cheap), opened
    again after a failure."""

    def __init__(self, url: str, sqlite_synchronous: str, sqlite_cache_kib: int) -> None:
        parsed = make_url(url)
        self.dialect = parsed.get_backend_name()
        self.synchronous = sqlite_synchronous
        self.cache_kib = sqlite_cache_kib
        if self.dialect == "sqlite":
            self.target = parsed.database or ""
        else:
            self.target = parsed.set(drivername="postgresql").render_as_string(
                hide_password=False)
        self.conn: Any = None

    def _connect(self) -> Any:
        if self.dialect == "sqlite":
            conn = sqlite3.connect(self.target, timeout=30, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute(f"PRAGMA cache_size=-{self.cache_kib}")
            # Checkpoints run in the Checkpointer thread, off the commit path.
            conn.execute("PRAGMA wal_autocheckpoint=0")
            return conn
        return psycopg.connect(self.target, connect_timeout=3, autocommit=False)

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - it is being thrown away
                pass

    def transaction(self, writer: BatchWriter, batches: list[WireBatch]) -> None:
        """Write and commit; a connection that went stale while idle is replaced once."""
        fresh = self.conn is None
        try:
            self._write(writer, batches)
        except _UNAVAILABLE:
            self.close()
            if fresh:
                raise
            self._write(writer, batches)

    def _write(self, writer: BatchWriter, batches: list[WireBatch]) -> None:
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


class Checkpointer(threading.Thread):
    """Copies the SQLite write-ahead log back into the database in the background.

    Left to SQLite, a checkpoint runs inside whichever commit crosses 1,000 pages,
    and the requests of that commit wait for it. Here it runs in its own thread on
    its own connection: a checkpoint is one long call into SQLite that releases the
    interpreter lock, so the writer keeps writing meanwhile. PASSIVE never blocks the
    writer; if the log still grows past `TRUNCATE_BYTES` (readers holding old
    snapshots, say), a blocking checkpoint bounds it.
    """

    START_BYTES = 8 * 1024 * 1024
    TRUNCATE_BYTES = 512 * 1024 * 1024

    def __init__(self, path: str) -> None:
        super().__init__(name="sounding-checkpoint", daemon=True)
        self.path = path
        self.wal = path + "-wal"
        self.wake = threading.Event()
        self.stopping = False

    def run(self) -> None:
        conn: sqlite3.Connection | None = None
        while not self.stopping:
            self.wake.wait(1.0)
            self.wake.clear()
            try:
                size = os.path.getsize(self.wal)
            except OSError:
                continue
            if size < self.START_BYTES:
                continue
            try:
                if conn is None:
                    conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                           check_same_thread=False)
                mode = "TRUNCATE" if size > self.TRUNCATE_BYTES else "PASSIVE"
                conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
            except sqlite3.Error as exc:
                log.warning("checkpoint failed: %s", exc)
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def stop(self) -> None:
        self.stopping = True
        self.wake.set()
        self.join(30)


class WriterLoop:
    def __init__(self, channel: Connection, config: dict[str, Any]) -> None:
        self.channel = channel
        self.max_commit = int(config["max_commit_records"])
        self.db = Database(config["url"], config["sqlite_synchronous"],
                           int(config["sqlite_cache_kib"]))
        self.writer = BatchWriter(self.db.dialect)
        self.checkpointer: Checkpointer | None = None
        if self.db.dialect == "sqlite" and self.db.target not in ("", ":memory:"):
            self.checkpointer = Checkpointer(self.db.target)

    def run(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.start()
        try:
            self._serve()
        finally:
            if self.checkpointer is not None:
                self.checkpointer.stop()
        self.db.close()
        try:
            self.channel.send_bytes(pickle.dumps(("bye",)))
        except OSError:
            pass

    def _serve(self) -> None:
        self.channel.send_bytes(pickle.dumps(("ready",)))
        stopping = False
        while not stopping:
            taken: list[tuple[int, int, WireBatch]] = []
            records = 0
            try:
                frame = pickle.loads(self.channel.recv_bytes())
                while True:
                    if frame[0] == "drain":
                        stopping = True
                        break
                    _, seq, count, wire = frame
                    taken.append((seq, count, wire))
                    records += count
                    if records >= self.max_commit or not self.channel.poll(0):
                        break
                    frame = pickle.loads(self.channel.recv_bytes())
            except (EOFError, OSError):
                stopping = True  # the collector is gone: commit what arrived, then exit
            if taken:
                self._commit(taken)
                if self.checkpointer is not None:
                    self.checkpointer.wake.set()

    def _commit(self, taken: list[tuple[int, int, WireBatch]]) -> None:
        started = time.perf_counter()
        try:
            self.db.transaction(self.writer, [wire for _, _, wire in taken])
        except Exception as exc:  # noqa: BLE001 - every failure is answered to its waiters
            if len(taken) > 1 and not is_unavailable(exc):
                # One request's data broke the transaction: commit the others alone so
                # that one bad request does not fail its neighbours.
                for item in taken:
                    self._commit([item])
                return
            if is_unavailable(exc):
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                log.warning("store unavailable, %d requests answered 503: %s", len(taken), first)
                outcome: tuple[str, str] | None = ("unavailable", first)
            else:
                log.exception("commit failed for %d requests", len(taken))
                outcome = ("failed", f"{type(exc).__name__}: {exc}")
            self._answer(taken, outcome, 0.0)
            return
        self._answer(taken, None, time.perf_counter() - started)

    def _answer(self, taken: list[tuple[int, int, WireBatch]],
                outcome: tuple[str, str] | None, seconds: float) -> None:
        records = sum(count for _, count, _ in taken)
        try:
            self.channel.send_bytes(pickle.dumps(
                ("done", [seq for seq, _, _ in taken], outcome, seconds, records)))
        except OSError:
            pass  # the collector is gone; what was committed stays committed


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sock = socket.socket(fileno=int(argv[1]))
    channel = Connection(sock.detach())
    try:
        config = pickle.loads(channel.recv_bytes())
    except (EOFError, OSError):
        return 0  # the collector stopped before it configured us
    logging.basicConfig(level=config.get("log_level", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    WriterLoop(channel, config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
