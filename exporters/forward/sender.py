"""Sending the outbox upstream: one loop per forwarded signal, each taking its
signal's rows in id order, with up to `concurrent_requests` of them in flight.

A row is deleted once the upstream answers 2xx. On 429, 502, 503, 504, a timeout
or a connection error the same row is tried again after the upstream's
`Retry-After` (seconds or an HTTP date) or, without one, an exponential backoff
with full jitter (runtime/retry.py's Backoff) up to `max_backoff_seconds`;
the rows after it wait for a free slot, so a down upstream is not hammered. Any
other answer is permanent: the row is deleted, its records counted and the reason
logged (throttled, runtime/logthrottle.py), never retried for ever.

Stopping cancels the loops wherever they are: a row being sent stays in the
outbox and is sent again at the next start (at least once: the gateway
deduplicates spans by id).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from exporters.forward import telemetry
from exporters.forward.client import Settings, post
from model.timeutil import now_us
from runtime.httppost import Client, new_client
from runtime.retry import Backoff, Failed, Retry, Sent, retry_delay
from runtime.tasks import cancel_and_wait, woken
from storage import outbox
from storage.outbox import Row
from storage.store import Store

log = logging.getLogger(__name__)

TAKE = 64  # rows read per query
FIRST_BACKOFF = 0.5  # seconds: the ceiling of the first retry's delay
IDLE_POLL = 5.0  # seconds between looks at an idle queue (rows another process added)


class Sender:
    def __init__(self, store: Store, queue: str, routes: dict[str, str], settings: Settings,
                 max_backoff: float, on_removed: Callable[[int, int], None],
                 delete: Callable[[list[int]], Awaitable[None]],
                 concurrency: int = 1) -> None:
        self.store = store
        self.queue = queue
        self.routes = routes
        self.settings = settings
        self.max_backoff = max_backoff
        self.concurrency = concurrency  # requests in flight per signal
        self._on_removed = on_removed  # (records, bytes) left the queue
        self._delete = delete  # the enqueuer's: deletes share its group commit
        self._wake: dict[str, asyncio.Event] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._client: Client | None = None

    def start(self) -> None:
        if self._tasks:
            return
        self._client = new_client()
        loop = asyncio.get_running_loop()
        for signal in self.routes:
            self._wake[signal] = asyncio.Event()
            self._tasks.append(loop.create_task(self._run(signal), name=f"forward {signal}"))

    async def shutdown(self) -> None:
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def wake(self, signal: str) -> None:
        event = self._wake.get(signal)
        if event is not None:
            event.set()

    async def _run(self, signal: str) -> None:
        backoff = Backoff(FIRST_BACKOFF, self.max_backoff)
        slots = asyncio.Semaphore(self.concurrency)
        in_flight: set[asyncio.Task[None]] = set()
        after_id = 0  # ids only grow (AUTOINCREMENT): a row taken is never taken again
        try:
            while True:
                try:
                    rows = await asyncio.to_thread(outbox.take, self.store, self.queue,
                                                   signal, TAKE, after_id)
                except Exception as exc:  # noqa: BLE001 - the store is down: try again later
                    log.error("cannot read the forwarding queue: %s", exc)
                    await asyncio.sleep(backoff.next())
                    continue
                if not rows:
                    await woken(self._wake[signal], IDLE_POLL)
                    continue
                for row in rows:
                    # Up to `concurrency` rows in flight: a gateway commits concurrent
                    # requests together, so the queue drains several times faster than
                    # one request per round trip. Order within the window is loose
                    # (spans are deduplicated by id; every record carries its time).
                    await slots.acquire()
                    task = asyncio.get_running_loop().create_task(
                        self._guarded(signal, row, backoff))
                    in_flight.add(task)
                    task.add_done_callback(in_flight.discard)
                    task.add_done_callback(lambda _: slots.release())
                    after_id = row.id
        finally:
            for task in list(in_flight):
                task.cancel()
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)

    async def _guarded(self, signal: str, row: Row, backoff: Backoff) -> None:
        try:
            await self._deliver(signal, row, backoff)
        except Exception:
            # A bug, not the upstream (post() answers every network failure): logged
            # once per kind (throttled); the row stays queued for the next start.
            log.exception("forwarding a %s row failed", signal)

    async def _deliver(self, signal: str, row: Row, backoff: Backoff) -> None:
        """Send one row until it is sent or refused for good, then delete it."""
        wait_us = row.next_attempt_us - now_us()
        if row.attempts and wait_us > 0:  # what the upstream asked before a restart
            await asyncio.sleep(min(wait_us / 1e6, self.max_backoff))
        while True:
            assert self._client is not None
            outcome = await post(self._client, self.routes[signal], row, self.settings)
            if not isinstance(outcome, Retry):
                break
            # Retry-After as the upstream said (at most an hour), else the backoff.
            delay = retry_delay(outcome.after_s, backoff.next)
            telemetry.RETRIES.labels(self.queue, signal, outcome.error).inc()
            with contextlib.suppress(Exception):  # only a hint for a restart; the row stays
                await asyncio.to_thread(outbox.reschedule, self.store, row.id,
                                        now_us() + int(delay * 1e6))
            await asyncio.sleep(delay)
        backoff.reset()
        await self._remove(row)
        self._count(signal, row, outcome)

    async def _remove(self, row: Row) -> None:
        while True:
            try:
                await self._delete([row.id])
                break
            except Exception as exc:  # noqa: BLE001 - sent already; retrying the delete
                log.error("cannot delete a sent row from the forwarding queue: %s", exc)
                await asyncio.sleep(1.0)
        self._on_removed(row.records, len(row.body))

    def _count(self, signal: str, row: Row, outcome: Sent | Failed) -> None:
        if isinstance(outcome, Sent):
            taken = row.records - outcome.rejected
            telemetry.SENT.labels(self.queue, signal).inc(taken)
            if outcome.rejected:
                telemetry.FAILED.labels(self.queue, signal, "partial_success").inc(
                    outcome.rejected)
                log.error("the upstream rejected %d of %d %s records (OTLP partial success)",
                          outcome.rejected, row.records, signal)
            return
        telemetry.FAILED.labels(self.queue, signal, outcome.error).inc(row.records)
        log.error("the upstream refused %d %s records for good (%s at %s); dropped",
                  row.records, signal, outcome.error, self.routes[signal])
