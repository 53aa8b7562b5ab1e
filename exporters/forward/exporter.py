"""The forwarding exporter: a batch is encoded for the upstream (encode.py, in a
decode worker when the batch was decoded in one), committed to the outbox of the
local store (enqueue.py) and only then acknowledged; the sender (sender.py) sends
it on in the background, at least once.

So a 202 stays honest and an upstream outage does not block ingest: until the
backlog reaches `queue_max_records` or `queue_max_bytes`. Past that bound ingest
answers 503 + Retry-After (Overloaded), before decoding where it can
(`admission_error`): back-pressure to the clients, and nothing that was
acknowledged is ever dropped to make room.

Health is the queue's: unhealthy only while it cannot be written. An upstream
that is down is what the queue is for; it shows in /metrics (the backlog grows,
retries count up).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from exporters.forward import telemetry
from exporters.forward.client import Settings
from exporters.forward.config import DEFAULTS, check, routes
from exporters.forward.encode import Encoded, encode, prepare
from exporters.forward.enqueue import Enqueuer
from exporters.forward.sender import Sender
from extensions.storage import StorageExtension
from model.component import Exporter, Host, Preparation
from model.errors import Overloaded, RetryableError, StoreUnavailable
from model.records import Batch
from runtime import drops
from runtime.factory import Factory
from runtime.queuebound import QueueBound
from storage import outbox
from storage.store import Store

log = logging.getLogger(__name__)


class ForwardExporter(Exporter):
    def __init__(self, name: str, config: dict[str, Any] | None = None, *,
                 store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        settings = {**DEFAULTS, **self.config}
        self.routes = routes(settings)
        # What is queued and not yet sent, including what an earlier run left.
        self.backlog = QueueBound(int(settings["queue_max_records"]),
                                  int(settings["queue_max_bytes"]))
        self.retry_after = int(settings["retry_after_seconds"])
        self._encoding = {"signals": sorted(self.routes),
                          "gzip": settings["compression"] == "gzip"}
        self._enqueuer = Enqueuer(store, name)
        self._sender = Sender(store, name, self.routes, Settings.of(settings),
                              float(settings["max_backoff_seconds"]), self._removed,
                              self._enqueuer.delete, int(settings["concurrent_requests"]))
        self._started = False
        self._closing = False

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._closing = False
        # What an earlier run left (upstream down, a crash): it counts against the
        # bound and is sent first.
        waiting = await asyncio.to_thread(outbox.backlog, self.store, self.name)
        self.backlog.add(sum(b.records for b in waiting.values()),
                         sum(b.bytes for b in waiting.values()))
        self._gauges()
        self._enqueuer.start()
        self._sender.start()

    async def shutdown(self) -> None:
        """Commit what was handed over, then stop sending; unsent rows stay queued."""
        if not self._started or self._closing:
            return
        self._closing = True
        # The sender first: its deletes go through the enqueuer's commits.
        await self._sender.shutdown()
        await self._enqueuer.shutdown()

    async def health(self) -> tuple[bool, str]:
        if self._enqueuer.failing:
            return False, "the forwarding queue cannot be written"
        return True, ""

    # Requests.

    def admission_error(self) -> RetryableError | None:
        if self._closing:
            return StoreUnavailable("the collector is shutting down", self.retry_after)
        if self.backlog.full:
            return Overloaded("the forwarding queue is full", self.retry_after)
        return None

    def preparation(self) -> Preparation:
        # Encoding and compressing is most of the work: done in the decode worker.
        return prepare, dict(self._encoding)

    async def export(self, batch: Batch) -> None:
        await self.export_prepared(encode(batch, self._encoding))

    async def export_prepared(self, prepared: Any) -> None:
        encoded: Encoded = prepared  # what exporters.forward.encode.prepare returned
        if self._closing or not self._started:
            raise StoreUnavailable("the collector is shutting down", self.retry_after)
        drops.count(encoded.unencodable, drops.UNENCODABLE, telemetry.FAILED, self.name)
        if not encoded.entries:
            return
        records, size = encoded.records, encoded.size
        if not self.backlog.takes(records, size):
            for entry in encoded.entries:
                telemetry.REFUSED.labels(self.name, entry.signal).inc(entry.records)
            raise Overloaded("the forwarding queue is full", self.retry_after)
        # Counted before the commit, so that concurrent requests see the bound.
        self.backlog.add(records, size)
        self._gauges()
        try:
            await self._enqueuer.put(encoded.entries)
        except Exception:
            # Not committed. (A cancelled request is not caught: its rows are
            # committed all the same, and the sender will count them out.)
            self._removed(records, size)
            raise
        for signal in {entry.signal for entry in encoded.entries}:
            self._sender.wake(signal)

    def _removed(self, records: int, size: int) -> None:
        self.backlog.remove(records, size)
        self._gauges()

    def _gauges(self) -> None:
        telemetry.BACKLOG_RECORDS.labels(self.name).set(self.backlog.records)
        telemetry.BACKLOG_BYTES.labels(self.name).set(self.backlog.bytes)


def _create(name: str, config: dict[str, Any], host: Host) -> ForwardExporter:
    # The local store is the storage extension's; the outbox is one of its tables.
    return ForwardExporter(name, config, store=host.extension("storage", StorageExtension).store)


# What the lifecycle test builds it with: an endpoint nothing listens on (the discard
# port), so the sender only ever counts retries.
factory = Factory("forward", "exporter", _create, DEFAULTS, check,
                  sample_config={"endpoint": "http://127.0.0.1:9"})
