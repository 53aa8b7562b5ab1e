"""The SQL exporter: a bounded queue and one writer thread doing group commit.

Receivers await `export`; the writer takes everything queued (up to
`max_commit_records`), writes it in one transaction, and only then resolves each
waiting request. So a 202 always means committed, and one fsync serves many
requests. The thread spends most of its time inside the database driver, where
the GIL is released, so decoding on the event loop and writing overlap.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from sounding import metrics
from sounding.component import Exporter
from sounding.errors import Overloaded, StoreUnavailable
from sounding.records import Batch
from sounding.timeutil import now_us
from storage.store import Store
from storage.writer import write_batches

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Pending:
    batch: Batch
    future: asyncio.Future[None]
    records: int
    size: int


def _is_unavailable(exc: BaseException) -> bool:
    """Errors of the connection or of lock contention: retryable, not the data's fault."""
    if isinstance(exc, OperationalError | InterfaceError):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


class SqlExporter(Exporter):
    def __init__(self, name: str, config: dict[str, Any] | None = None, *,
                 store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        self.max_records = int(self.config.get("queue_max_records", 200_000))
        self.max_bytes = int(self.config.get("queue_max_bytes", 128 * 1024 * 1024))
        self.max_commit = int(self.config.get("max_commit_records", 50_000))
        self.retry_after = int(self.config.get("retry_after_seconds", 1))
        self._queue: deque[_Pending] = deque()
        self._queued_records = 0
        self._queued_bytes = 0
        self._cond = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name=f"sounding-writer-{self.name}",
                                        daemon=True)
        self._thread.start()

    async def shutdown(self) -> None:
        """Stop taking batches, commit everything queued, then return."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        thread, self._thread = self._thread, None
        if thread is not None:
            await asyncio.to_thread(thread.join)

    async def export(self, batch: Batch) -> None:
        if self._thread is None or self._loop is None or self._closing:
            raise StoreUnavailable("the collector is shutting down", self.retry_after)
        records = batch.record_count()
        if records == 0 and not batch.groups and not batch.reopen_after:
            return
        size = max(batch.approx_bytes, 0)
        future: asyncio.Future[None] = self._loop.create_future()
        with self._cond:
            # An empty queue always takes one batch, however large, so that a batch
            # bigger than the bound is not refused forever.
            if self._queue and (self._queued_records + records > self.max_records
                                or self._queued_bytes + size > self.max_bytes):
                raise Overloaded("the write queue is full", self.retry_after)
            self._queue.append(_Pending(batch, future, records, size))
            self._queued_records += records
            self._queued_bytes += size
            metrics.QUEUE_RECORDS.set(self._queued_records)
            metrics.QUEUE_BYTES.set(self._queued_bytes)
            self._cond.notify()
        await future

    # The writer thread.

    def _take(self) -> list[_Pending]:
        with self._cond:
            while not self._queue and not self._closing:
                self._cond.wait()
            taken: list[_Pending] = []
            total = 0
            while self._queue and (not taken or total + self._queue[0].records <= self.max_commit):
                item = self._queue.popleft()
                taken.append(item)
                total += item.records
                self._queued_records -= item.records
                self._queued_bytes -= item.size
            metrics.QUEUE_RECORDS.set(self._queued_records)
            metrics.QUEUE_BYTES.set(self._queued_bytes)
            return taken

    def _run(self) -> None:
        while True:
            taken = self._take()
            if not taken:
                return  # closing, and nothing left to commit
            self._commit(taken)

    def _commit(self, taken: list[_Pending]) -> None:
        started = time.perf_counter()
        try:
            with self.store.writer.begin() as conn:
                write_batches(conn, [p.batch for p in taken], now_us())
        except Exception as exc:  # noqa: BLE001 - every failure is answered to its waiters
            if len(taken) > 1 and not _is_unavailable(exc):
                # One request's data broke the transaction: commit the others alone so
                # that one bad request does not fail its neighbours.
                for item in taken:
                    self._commit([item])
                return
            self._fail(taken, exc)
            return
        records = sum(p.records for p in taken)
        metrics.COMMIT_SECONDS.observe(time.perf_counter() - started)
        metrics.COMMIT_RECORDS.observe(records)
        for item in taken:
            for signal, n in (("spans", len(item.batch.spans)), ("errors", len(item.batch.errors)),
                              ("deploys", len(item.batch.deploys)),
                              ("requests", len(item.batch.requests))):
                if n:
                    metrics.ACCEPTED.labels(signal).inc(n)
            self._resolve(item.future, None)

    def _fail(self, taken: list[_Pending], exc: BaseException) -> None:
        error: BaseException
        if _is_unavailable(exc):
            log.warning("store unavailable, %d requests answered 503: %s", len(taken),
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            error = StoreUnavailable("the store cannot be reached", self.retry_after)
        else:
            log.exception("commit failed for %d requests", len(taken))
            error = exc
        for item in taken:
            self._resolve(item.future, error)

    def _resolve(self, future: asyncio.Future[None], error: BaseException | None) -> None:
        assert self._loop is not None

        def settle() -> None:
            if future.done():  # the client went away; its data is committed all the same
                return
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)

        try:
            self._loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass
