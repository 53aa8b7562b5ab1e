"""The SQL exporter: a bounded queue in front of one writer process doing group commit.

Receivers await `export`. The batch is encoded to plain tuples and handed to the
writer process (exporters/sql/writer.py), which commits everything waiting in one
transaction and reports the sequence numbers it committed; only then is each
waiting request resolved. So a 202 always means committed, one commit serves many
requests, and decoding here and writing there run on two cores at once.

What is handed over and not yet committed is bounded by records and by bytes;
past the bound, requests are refused with Overloaded (503 + Retry-After) instead of
letting memory grow, preferably before they are decoded (`admission_error`). If the
writer process dies, what it had not confirmed is answered StoreUnavailable (503)
and runtime/supervisor.py starts a new writer (within 0.1 s, backing off if it
keeps dying).

In a serve group (runtime/group.py) the leader's exporter owns the writer and
listens, in the group's directory, for its workers; a worker's exporter connects
there (runtime/attach.py) instead of starting a writer of its own, so the one writer
commits every worker's batches together and answers each on its connection. A
worker holds its share of the queue bound (`group.share`), so the writer's backlog
stays within the configured bound. If the writer dies, every worker answers what it
had handed over 503 and connects again once the leader has started a new writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import make_url

from exporters.sql.config import DEFAULTS, check
from extensions.storage import StorageExtension
from model import limits
from model.component import Exporter, Host, Preparation
from model.errors import Overloaded, RetryableError, StoreUnavailable
from model.records import Batch
from runtime import channel, drops, group, telemetry, usage
from runtime.attach import Attachment
from runtime.factory import Factory
from runtime.queuebound import QueueBound
from runtime.supervisor import ChildFailed, Supervisor
from storage.store import Store
from storage.wire.batch import EncodedBatch, encode, prepare

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0
STOP_TIMEOUT = 120.0  # the writer's last commits; each waits up to 30 s for a lock


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
        settings = {**DEFAULTS, **self.config}
        self.place = group.place()
        share = group.share if self.place.role == group.WORKER else int
        self.queue = QueueBound(share(int(settings["queue_max_records"])),
                                share(int(settings["queue_max_bytes"])))
        self.max_commit = int(settings["max_commit_records"])
        self.trace_wait_s = float(settings["trace_wait_s"])
        self.retry_after = int(settings["retry_after_seconds"])
        self.sqlite_cache_kib = int(settings["sqlite_cache_kib"])
        self._pending: dict[int, _Pending] = {}
        self._seq = 0
        self._listener: socket.socket | None = None  # a group leader's, for its workers
        self._writer: Supervisor | Attachment
        if self.place.role == group.WORKER:
            self._writer = Attachment("the writer process", group.writer_socket(name),
                                      on_item=self._on_item, on_exit=self._writer_gone,
                                      start_timeout=START_TIMEOUT)
        else:
            self._writer = Supervisor("the writer process", "exporters.sql.writer",
                                      self._writer_config, on_item=self._on_item,
                                      on_exit=self._writer_gone, start_timeout=START_TIMEOUT,
                                      stop_timeout=STOP_TIMEOUT)
        self._started = False
        self._closing = False
        self._shedding = False
        self._gauges_soon = telemetry.once_per_turn(self._gauges)

    # Lifecycle.

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._closing = False
        if self.place.role == group.LEADER and isinstance(self._writer, Supervisor):
            self._listen()
        try:
            await self._writer.start()
        except ChildFailed as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def shutdown(self) -> None:
        """Stop taking batches, let the writer commit everything handed over, then return."""
        if not self._started or self._closing:
            return
        self._closing = True
        if isinstance(self._writer, Attachment):
            # The writer is the group's: wait for this worker's commits, not for it.
            waiting = [item.future for item in self._pending.values()]
            if waiting:
                await asyncio.wait(waiting, timeout=STOP_TIMEOUT)
        await self._writer.shutdown(goodbye=("drain",))
        self._fail_all("the collector is shutting down")
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                os.unlink(listener.getsockname())
            listener.close()

    def _listen(self) -> None:
        """The socket the group's workers connect to; the leader's, so it outlives
        every writer started on it and a worker's connection waits in its backlog
        while a new one starts."""
        if self._listener is not None:
            return
        path = group.writer_socket(self.name)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(path)
        listener.listen(128)
        self._listener = listener
        assert isinstance(self._writer, Supervisor)
        self._writer.pass_fds = (listener.fileno(),)

    async def health(self) -> tuple[bool, str]:
        # While the writer restarts every batch is refused 503, so GET /health says
        # so too: a load balancer should send clients elsewhere meanwhile. The
        # store's own health (`db_ok`) is the storage extension's to report.
        if not self._started:
            return False, "not started"
        if self._closing:
            return False, "the collector is shutting down"
        if not self._writer.ready:
            return False, "the store writer is restarting"
        return True, ""

    def _writer_config(self) -> dict[str, Any]:
        synchronous = "NORMAL"
        if self.store.dialect == "sqlite":
            with self.store.writer.connect() as conn:
                level = int(conn.exec_driver_sql("PRAGMA synchronous").scalar() or 1)
            synchronous = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(level, "NORMAL")
        url = make_url(self.store.url)
        target = (url.database or "" if self.store.dialect == "sqlite" else
                  url.set(drivername="postgresql").render_as_string(hide_password=False))
        return {"dialect": self.store.dialect, "target": target,
                "sqlite_synchronous": synchronous,
                "sqlite_cache_kib": self.sqlite_cache_kib,
                "sqlite_wal_max_bytes": self.store.sqlite_wal_max_bytes,
                "max_commit_records": self.max_commit,
                "trace_wait_s": self.trace_wait_s,
                "listen_fd": self._listener.fileno() if self._listener is not None else None}

    # The channel (runtime/channel.py): non-blocking, driven by the event loop.

    def _on_item(self, item: channel.Item) -> None:
        message, _ = item
        if message[0] == "done":
            _, seqs, outcome, seconds, records = message
            if outcome is None and seconds is not None:  # one worker observes a commit
                telemetry.COMMIT_SECONDS.observe(seconds)
                telemetry.COMMIT_RECORDS.observe(records)
            # Counted once per answer (a group commit's requests), not per request.
            accepted: Counter[str] = Counter()
            for seq in seqs:
                accepted.update(self._settle(seq, outcome))
            for signal_name, n in accepted.items():
                if n:
                    telemetry.child(telemetry.ACCEPTED, signal_name).inc(n)
        # "bye": the writer drained at shutdown; its channel closes next.

    def _writer_gone(self, code: int | None) -> None:
        if self._closing:
            return
        # The writer died: nobody will confirm what it had, so those requests are
        # answered retryable (a retried span is not stored twice); the supervisor
        # starts a new one.
        log.error("the writer process stopped (exit code %s); answering %d pending requests "
                  "503 and starting a new one", code, len(self._pending))
        self._fail_all("the writer process stopped")

    # Requests.

    def admission_error(self) -> RetryableError | None:
        """Why a request would be refused now; receivers ask before decoding a body
        (receiver/http/base.py), so that shedding load costs next to nothing."""
        if self._closing:
            return StoreUnavailable("the collector is shutting down", self.retry_after)
        if not self._writer.ready:
            return StoreUnavailable("the store writer is restarting", self.retry_after)
        if self._shedding:
            # Once the queue overflowed, keep refusing until it is half empty, so that
            # load is shed at the door rather than after decoding.
            if self.queue.over_half:
                return Overloaded("the write queue is full", self.retry_after)
            self._shedding = False
        if self.queue.full:
            return Overloaded("the write queue is full", self.retry_after)
        return None

    def preparation(self) -> Preparation:
        # A decode worker encodes and pickles the batch (storage/wire/batch.py), the larger
        # part of the work, so that the event loop only passes the bytes on.
        return prepare, {}

    async def export(self, batch: Batch) -> None:
        self._check_open()
        await self.export_prepared(encode(batch))

    async def export_prepared(self, prepared: Any) -> None:
        encoded: EncodedBatch = prepared  # what storage.wire.batch.prepare returned
        self._check_open()
        drops.count(encoded.unencodable, drops.UNENCODABLE)
        for field_name, n in encoded.unencodable.items():
            category = limits.BATCH_FIELDS.get(field_name)
            if n and category is not None:
                # The pipeline counts the batch's records accepted once it is
                # committed: these were not stored.
                usage.count(encoded.project_id, category, limits.DROPPED, n)
                usage.count(encoded.project_id, category, limits.ACCEPTED, -n)
        if encoded.empty:
            return
        records, size, counts = encoded.records, encoded.size, encoded.counts
        if not self.queue.takes(records, size):
            for signal_name, n in counts.items():
                if n:
                    telemetry.RECORDS_REFUSED.labels(signal_name, "overloaded").inc(n)
            self._shedding = True
            raise Overloaded("the write queue is full", self.retry_after)
        self._seq += 1
        seq = self._seq
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[seq] = _Pending(future, records, size, counts)
        self.queue.add(records, size)
        self._gauges_soon()
        # Only the pickled payload is kept until the commit: it is what bounds memory.
        self._writer.send(("batch", seq, records), encoded.payload)
        await future

    def _check_open(self) -> None:
        if self._closing:
            raise StoreUnavailable("the collector is shutting down", self.retry_after)
        if not self._writer.ready:
            raise StoreUnavailable("the store writer is restarting", self.retry_after)

    def _settle(self, seq: int, outcome: tuple[str, str] | None) -> dict[str, int]:
        """Answer request `seq`; its records committed, by signal, for the caller to
        count once per answer ({} when refused or unknown)."""
        item = self._pending.pop(seq, None)
        if item is None:
            return {}
        self.queue.remove(item.records, item.size)
        self._gauges_soon()
        if outcome is None:
            error: BaseException | None = None
        elif outcome[0] == "unavailable":
            error = StoreUnavailable("the store cannot be reached", self.retry_after)
        else:
            error = WriteFailed(outcome[1])
        if error is not None:
            reason = "unavailable" if isinstance(error, StoreUnavailable) else "failed"
            for signal_name, n in item.counts.items():
                if n:
                    telemetry.RECORDS_REFUSED.labels(signal_name, reason).inc(n)
        if not item.future.done():  # else the client went away; committed all the same
            if error is None:
                item.future.set_result(None)
            else:
                item.future.set_exception(error)
        return item.counts if error is None else {}

    def _fail_all(self, why: str) -> None:
        for seq in list(self._pending):
            self._settle(seq, ("unavailable", why))

    def _gauges(self) -> None:
        telemetry.QUEUE_RECORDS.set(self.queue.records)
        telemetry.QUEUE_BYTES.set(self.queue.bytes)


def _create(name: str, config: dict[str, Any], host: Host) -> SqlExporter:
    # The store is the storage extension's: one Store, migrated once, for every user.
    return SqlExporter(name, config, store=host.extension("storage", StorageExtension).store)


factory = Factory("sql", "exporter", _create, DEFAULTS, check)
