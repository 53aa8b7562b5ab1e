"""The SQL exporter: a bounded queue in front of one writer process doing group commit.

Receivers await `export`. The batch is encoded to plain tuples and handed to the
writer process (exporters/sql_writer.py), which commits everything waiting in one
transaction and reports the sequence numbers it committed; only then is each
waiting request resolved. So a 202 always means committed, one fsync serves many
requests, and decoding here and writing there run on two cores at once.

What is handed over and not yet committed is bounded by records and by bytes;
past the bound, `export` raises Overloaded (503 + Retry-After) at once instead of
letting memory grow. If the writer process dies, what it had not confirmed is
answered StoreUnavailable (503) and a new writer is started.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import socket
import struct
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from sounding import metrics
from sounding.component import Exporter
from sounding.errors import Overloaded, StoreUnavailable
from sounding.records import Batch
from storage.store import Store
from storage.writer import encode_batch, wire_records

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0
RESPAWN_DELAY = 1.0
_HEADER = struct.Struct("!i")  # multiprocessing.connection framing, read by the writer


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[None]
    records: int
    size: int
    counts: dict[str, int]


class WriteFailed(Exception):
    """The writer could not commit a request for a reason other than the store's
    availability; answered as a server error, and logged by the writer."""


class SqlExporter(Exporter):
    def __init__(self, name: str, config: dict[str, Any] | None = None, *,
                 store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        self.max_records = int(self.config.get("queue_max_records", 20_000))
        self.max_bytes = int(self.config.get("queue_max_bytes", 64 * 1024 * 1024))
        self.max_commit = int(self.config.get("max_commit_records", 10_000))
        self.retry_after = int(self.config.get("retry_after_seconds", 1))
        self.sqlite_cache_kib = int(self.config.get("sqlite_cache_kib", 32 * 1024))
        self._pending: dict[int, _Pending] = {}
        self._pending_records = 0
        self._pending_bytes = 0
        self._seq = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._stream: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._respawn: asyncio.Task[None] | None = None
        self._ready = False  # a writer is running and answering
        self._started = False
        self._closing = False

    # Lifecycle.

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._closing = False
        await self._spawn()

    async def shutdown(self) -> None:
        """Stop taking batches, let the writer commit everything handed over, then return."""
        if not self._started or self._closing:
            return
        self._closing = True
        if self._respawn is not None:
            self._respawn.cancel()
        if self._stream is not None and self._ready:
            self._send(("drain",))
        if self._reader_task is not None:
            await asyncio.gather(self._reader_task, return_exceptions=True)
        await self._reap()
        self._fail_all("the collector is shutting down")

    async def _spawn(self) -> None:
        parent, child = socket.socketpair()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "exporters.sql_writer", str(child.fileno())],
                pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL)
        finally:
            child.close()
        self._proc = proc
        reader, self._stream = await asyncio.open_connection(sock=parent)
        self._send(self._writer_config())
        try:
            hello = await asyncio.wait_for(self._read_frame(reader), START_TIMEOUT)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, OSError) as exc:
            await self._reap()
            raise StoreUnavailable(f"the writer process did not start: {exc!r}") from exc
        assert hello == ("ready",), hello
        self._ready = True
        self._reader_task = asyncio.create_task(self._read_acks(reader))

    def _writer_config(self) -> dict[str, Any]:
        synchronous = "NORMAL"
        if self.store.dialect == "sqlite":
            with self.store.writer.connect() as conn:
                level = conn.exec_driver_sql("PRAGMA synchronous").scalar()
            synchronous = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(level, "NORMAL")
        return {"url": self.store.url, "sqlite_synchronous": synchronous,
                "sqlite_cache_kib": self.sqlite_cache_kib,
                "max_commit_records": self.max_commit,
                "log_level": logging.getLevelName(logging.getLogger().getEffectiveLevel())}

    async def _reap(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        proc, self._proc = self._proc, None
        if proc is not None:
            code = await asyncio.to_thread(proc.wait)
            if code != 0 and not self._closing:
                log.error("the writer process exited with %s", code)

    # The channel.

    def _send(self, message: Any) -> None:
        assert self._stream is not None
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._stream.write(_HEADER.pack(len(data)) + data)

    @staticmethod
    async def _read_frame(reader: asyncio.StreamReader) -> Any:
        (length,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
        return pickle.loads(await reader.readexactly(length))

    async def _read_acks(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                message = await self._read_frame(reader)
                if message[0] == "bye":
                    break
                _, seqs, outcome, seconds, records = message
                if outcome is None:
                    metrics.COMMIT_SECONDS.observe(seconds)
                    metrics.COMMIT_RECORDS.observe(records)
                for seq in seqs:
                    self._settle(seq, outcome)
        except (asyncio.IncompleteReadError, OSError):
            pass
        self._ready = False
        if self._closing:
            return
        # The writer died: nobody will confirm what it had, so those requests are
        # answered retryable (a retried span is not stored twice), and a new one starts.
        log.error("the writer process stopped; answering %d pending requests 503 and "
                  "starting a new one", len(self._pending))
        self._fail_all("the writer process stopped")
        self._respawn = asyncio.create_task(self._restart())

    async def _restart(self) -> None:
        await self._reap()
        while not self._closing:
            await asyncio.sleep(RESPAWN_DELAY)
            try:
                await self._spawn()
                return
            except Exception:  # noqa: BLE001 - keep trying; ingest answers 503 meanwhile
                log.exception("could not start the writer process")

    # Requests.

    async def export(self, batch: Batch) -> None:
        if self._closing:
            raise StoreUnavailable("the collector is shutting down", self.retry_after)
        if not self._ready:
            raise StoreUnavailable("the store writer is restarting", self.retry_after)
        records = batch.record_count()
        if records == 0 and not batch.groups and not batch.reopen_after:
            return
        wire = encode_batch(batch)
        counts = wire_records(wire)
        size = max(batch.approx_bytes, 0)
        # An idle writer always takes one batch, however large, so that a batch bigger
        # than the bound is not refused forever.
        if self._pending and (self._pending_records + records > self.max_records
                              or self._pending_bytes + size > self.max_bytes):
            for signal_name, n in counts.items():
                if n:
                    metrics.RECORDS_REFUSED.labels(signal_name, "overloaded").inc(n)
            raise Overloaded("the write queue is full", self.retry_after)
        assert self._stream is not None
        self._seq += 1
        seq = self._seq
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[seq] = _Pending(future, records, size, counts)
        self._pending_records += records
        self._pending_bytes += size
        self._gauges()
        self._send(("batch", seq, records, wire))
        await future

    def _settle(self, seq: int, outcome: tuple[str, str] | None) -> None:
        item = self._pending.pop(seq, None)
        if item is None:
            return
        self._pending_records -= item.records
        self._pending_bytes -= item.size
        self._gauges()
        if outcome is None:
            for signal_name, n in item.counts.items():
                if n:
                    metrics.ACCEPTED.labels(signal_name).inc(n)
            error: BaseException | None = None
        elif outcome[0] == "unavailable":
            error = StoreUnavailable("the store cannot be reached", self.retry_after)
        else:
            error = WriteFailed(outcome[1])
        if error is not None:
            reason = "unavailable" if isinstance(error, StoreUnavailable) else "failed"
            for signal_name, n in item.counts.items():
                if n:
                    metrics.RECORDS_REFUSED.labels(signal_name, reason).inc(n)
        if item.future.done():  # the client went away; its data is committed all the same
            return
        if error is None:
            item.future.set_result(None)
        else:
            item.future.set_exception(error)

    def _fail_all(self, why: str) -> None:
        for seq in list(self._pending):
            self._settle(seq, ("unavailable", why))

    def _gauges(self) -> None:
        metrics.QUEUE_RECORDS.set(self._pending_records)
        metrics.QUEUE_BYTES.set(self._pending_bytes)
