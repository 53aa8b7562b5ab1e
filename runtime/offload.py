"""Decode workers: large requests are decoded, processed and prepared in other processes.

One event loop serves every connection; on its own it also decoded every span,
ran the processors and built the rows, about 16 µs a span, so a busy trace
receiver kept one core full while the second (the writer's) was half idle, and
every other request waited behind a 512-span body. Trace bodies of at least
`decode_min_bytes` now go to a small pool of worker processes instead. A worker
runs the same pure steps the event loop would: the receiver's decode function
(handed over with each request, so that this core module imports no receiver), the
configured processors, then each exporter's declared preparation
(`Exporter.preparation`; the SQL exporter's is storage/wire/batch.py's encoding). It
returns one item per exporter, prepared or, for an exporter that declares none,
the processed batch, and the event loop hands them to the pipeline
(`Pipeline.consume_prepared`) without looking inside. The event loop is left
with HTTP and the hand-overs, about 3 µs a span.

Every worker builds its own copies of the configured processors (plugins too)
and starts them; a processor therefore must not count on state shared between
batches. Smaller requests and every other endpoint are decoded on the event loop,
where a round trip to a worker would cost more than it saves.

Workers are plain child processes (runtime/offload_worker.py) talking over
runtime/channel.py, run by runtime/supervisor.py like the writer process: they
import only what decoding needs (about 25 MB each), and they exit as soon as the
collector is gone, even after a `kill -9` of it.

Started when traffic needs them, not at start-up: a sidecar that never receives a
large body never pays a worker's memory, and the collector is healthy sooner. The
first body from `decode_min_bytes` starts one worker and waits for it (a fraction of
a second, once); each later body that finds every worker busy starts one more, up
to `workers`, and goes meanwhile to the least busy one that is running. Started
workers stay: the cost was paid, and traffic that came once comes again. A worker
that cannot start answers the requests waiting for it with 503 (to be retried) and
is tried again by a large body after a backoff (the supervisor's, at least 0.1 s,
doubling up to 30 s), not by every one, which would fork a process per request. What a worker
is handed once (the processor builder, the preparations) is checked at start-up to be
a function it can import, and the processors were built then on the event loop, so a
configuration error still stops the collector there.

Bounded: bodies waiting for or inside a worker count against `max_bytes`; past it
requests are refused with Overloaded (503 + Retry-After).

Total: nothing a client sends may stop a worker, since while one restarts every
other client's large trace request waits or is refused. Whatever one request
raises, while decoding, in a processor or a preparation (a RecursionError, a
MemoryError included), is that request's answer (400 for bad input, else 500,
logged once per kind) and the worker goes on; its address space is capped so
that a runaway allocation is a MemoryError there rather than the kernel's OOM
killer. A worker that dies all the same (a signal, a crash in C) fails the
request it was handling with a 500, not retried in another worker, since it may
be what killed it, and the requests queued behind it with a 503; it is counted in
`sounding_decode_worker_restarts_total` and started again by the supervisor (within
0.1 s, backing off if it keeps dying). A worker that holds one request for
`ANSWER_TIMEOUT` is stuck: that request is answered 500 and the worker killed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
from collections.abc import Callable
from typing import Any

from model import limits as lim
from model.component import Component, Preparation, Processor
from model.errors import InternalFailure, InvalidInput, Overloaded, StoreUnavailable
from model.records import Batch
from runtime import channel, drops, usage
from runtime.offload_worker import Offloaded, Spec, check_handed_by_name
from runtime.queuebound import QueueBound
from runtime.retry import Backoff
from runtime.supervisor import Supervisor

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# A worker that holds a request this long is stuck (a processor in an endless loop,
# say): it is killed, its requests are answered, and a new one is started.
ANSWER_TIMEOUT = 20.0
# The least time between a worker that failed to start and the next try.
FIRST_RETRY = 0.1


def default_workers() -> int:
    """One worker per core beyond the first (the event loop's), at most four; none on
    one core, where a worker would only take turns with the event loop."""
    return max(0, min(4, (os.cpu_count() or 1) - 1))


class _Worker:
    """One worker process and what it was given and has not answered yet."""

    def __init__(self, pool: DecodePool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.pending: dict[int, asyncio.Future[tuple[Any, bytes | None]]] = {}
        # Set when the request being handled was already answered (it timed out) and
        # the worker is killed for it: then no request left here is the culprit.
        self.culprit_answered = False
        # Its first start (runtime/supervisor.py restarts it after that on its own).
        self.starting: asyncio.Task[None] | None = None
        self.child = Supervisor(
            f"decode worker {index}", "runtime.offload_worker",
            lambda: {"processors": pool.processors, "preparations": pool.preparations,
                     "build_processor": pool.build_processor},
            on_item=self._on_item, on_exit=self._gone,
            start_timeout=START_TIMEOUT, stop_timeout=STOP_TIMEOUT)

    @property
    def is_starting(self) -> bool:
        return self.starting is not None and not self.starting.done()

    def submit(self, seq: int, request: tuple[Any, ...], body: bytes
               ) -> asyncio.Future[tuple[Any, bytes | None]]:
        future: asyncio.Future[tuple[Any, bytes | None]] = \
            asyncio.get_running_loop().create_future()
        self.pending[seq] = future
        self.child.send(("submit", seq, *request), body)
        return future

    def _on_item(self, item: channel.Item) -> None:
        (_, seq, result), payload = item
        future = self.pending.pop(seq, None)
        if future is not None and not future.done():
            future.set_result((result, payload))

    def _gone(self, code: int | None) -> None:
        pending, self.pending = self.pending, {}
        culprit_answered, self.culprit_answered = self.culprit_answered, False
        # The worker answers in the order it was given requests: the oldest one left
        # is the one it was handling, maybe the one that killed it. It is not retried
        # elsewhere (nor should its client retry it); those queued behind it are.
        for position, future in enumerate(pending.values()):
            if future.done():
                continue
            if position == 0 and not culprit_answered:
                future.set_exception(InternalFailure(
                    "the decode worker handling this request stopped"))
            else:
                future.set_exception(StoreUnavailable("a decode worker stopped; retry",
                                                      self.pool.retry_after))
        from runtime import telemetry

        telemetry.DECODE_WORKER_RESTARTS.inc()
        log.error("decode worker %d stopped (exit code %s); answered %d requests, starting "
                  "it again", self.index, code, len(pending))

    def kill(self, why: str) -> None:
        """Stop a stuck worker now; its channel's end then answers what it held."""
        if self.child.open:
            log.error("decode worker %d %s; killing it", self.index, why)
            self.culprit_answered = True
            self.child.kill()


class DecodePool(Component):
    def __init__(self, processors: list[Spec], preparations: list[Preparation | None],
                 workers: int, min_bytes: int, max_bytes: int, retry_after: int = 1, *,
                 build_processor: Callable[[str, Any], Processor]) -> None:
        super().__init__("decode_pool")
        self.processors = processors  # (name, settings), as the pipeline configures them
        # What a worker builds them with (runtime/plugins.py's, the registry's): handed
        # in by the service, since the registry knows every component type and their
        # stores, which this module must not import.
        self.build_processor = build_processor
        # Each exporter's `preparation()`, in the pipeline's order.
        self.preparations = preparations
        self.workers = workers
        self.min_bytes = min_bytes
        self.retry_after = retry_after
        # Bytes of the bodies waiting for or inside a worker.
        self.in_flight = QueueBound(None, max_bytes)
        self._workers: list[_Worker] = []
        self._started_count = 0  # workers made so far, for their names in the log
        # After a worker failed to start, none is tried again before `_not_before`.
        self._backoff = Backoff()
        self._not_before = 0.0
        self._seq = 0
        self._started = False
        self.closing = False

    def wants(self, size: int) -> bool:
        return self._started and not self.closing and size >= self.min_bytes

    async def start(self) -> None:
        """Starts no process: see "Started when traffic needs them" above. What every
        worker will be handed is checked here, once, so that a function a worker could
        not import (a lambda, a nested function) still stops the collector at start-up
        rather than failing traffic later."""
        if self._started or self.closing or self.workers <= 0:
            return
        functions = [self.build_processor,
                     *(p[0] for p in self.preparations if p is not None)]
        for function in functions:
            try:
                check_handed_by_name(function)
            except TypeError as exc:
                raise RuntimeError(f"the decode workers could not be started: {exc}") from exc
        self._started = True

    async def shutdown(self) -> None:
        """Waits for what the workers hold: receivers stop before the pipeline does."""
        self.closing = True
        workers, self._workers = self._workers, []
        # A worker still starting is let finish starting, then stopped like the others.
        await asyncio.gather(*(w.starting for w in workers if w.starting is not None),
                             return_exceptions=True)
        for worker in workers:
            if worker.pending:
                await asyncio.gather(*worker.pending.values(), return_exceptions=True)
        # A worker finishes what it holds, sees its channel close, and exits.
        await asyncio.gather(*(worker.child.shutdown() for worker in workers))

    def _add_worker(self) -> _Worker:
        self._started_count += 1
        worker = _Worker(self, self._started_count - 1)
        self._workers.append(worker)
        worker.starting = asyncio.get_running_loop().create_task(self._start_worker(worker))
        # Its failure is logged in _start_worker; retrieved here when nobody waited on it.
        worker.starting.add_done_callback(lambda task: task.cancelled() or task.exception())
        return worker

    async def _start_worker(self, worker: _Worker) -> None:
        try:
            await worker.child.start()
        except Exception as exc:
            # Out of the pool: a large body tries a new one after the backoff.
            if worker in self._workers:
                self._workers.remove(worker)
            # Never at once, whatever the jitter draws: each try is a process.
            delay = max(FIRST_RETRY, self._backoff.next())
            self._not_before = asyncio.get_running_loop().time() + delay
            if not self.closing:
                log.error("decode worker %d did not start: %s; trying again in %.1f s at "
                          "the earliest", worker.index, exc, delay)
            raise
        self._backoff.reset()

    async def _worker(self) -> _Worker:
        """The worker for one more request, started if need be (see the module's
        docstring)."""
        running = [w for w in self._workers if not w.is_starting and w.child.open]
        starting = [w for w in self._workers if w.is_starting]
        # One more when every running worker is busy and none is on its way already.
        if (not starting and len(self._workers) < self.workers
                and all(w.pending for w in running)
                and asyncio.get_running_loop().time() >= self._not_before):
            starting = [self._add_worker()]
        if running:
            return min(running, key=lambda w: len(w.pending))
        if not starting:  # restarted by its supervisor, or the backoff after a failure
            raise StoreUnavailable("the decode workers are restarting", self.retry_after)
        worker = starting[0]
        assert worker.starting is not None
        try:
            await asyncio.shield(worker.starting)
        except Exception:
            raise StoreUnavailable("a decode worker could not start; retry",
                                   self.retry_after) from None
        if self.closing or not worker.child.open:
            raise StoreUnavailable("the decode workers are restarting", self.retry_after)
        return worker

    async def submit(self, decode: Callable[..., Any], args: tuple[Any, ...], batch: Batch,
                     into: str, body: bytes) -> Offloaded:
        """Decode `body` in a worker with the pure function `decode` (defined at a
        module's top level, called as `decode(body, *args)`; it returns an object with
        `dropped`, `reasons` and the records in an attribute named `into`, like the field
        of `batch` they are put in, or in several: `into` "errors,spans"), then run the
        processors and the exporters' preparations. InvalidInput (400) or
        InternalFailure (500) for that request; retryable errors when the workers cannot
        take it."""
        if self.closing:
            raise StoreUnavailable("the collector is shutting down", self.retry_after)
        size = len(body)
        if not self.in_flight.takes(0, size):
            raise Overloaded("the decode workers are busy", self.retry_after)
        self._seq += 1
        self.in_flight.add(0, size)
        seq = self._seq
        try:
            worker = await self._worker()
        except BaseException:
            self.in_flight.remove(0, size)
            raise
        future = worker.submit(seq, (decode, args, batch, into), body)
        try:
            result, payload = await asyncio.wait_for(asyncio.shield(future), ANSWER_TIMEOUT)
        except TimeoutError:
            # This request is what the worker is stuck on: 500, not to be retried.
            worker.pending.pop(seq, None)
            worker.kill(f"held a request for {ANSWER_TIMEOUT:.0f} s")
            raise InternalFailure("decoding this request did not finish") from None
        finally:
            self.in_flight.remove(0, size)
        offloaded: Offloaded = result
        if offloaded.usage:
            usage.merge_from_worker(offloaded.usage)
        if offloaded.invalid is not None:
            raise InvalidInput(*offloaded.invalid)
        if offloaded.failure is not None:
            kind, detail = offloaded.failure
            # Logged once per kind per interval (runtime/logthrottle.py): the kind is
            # part of the template, the detail (which names the request) is not.
            log.error(f"a request ({into}) failed in a decode worker: "
                      + kind.replace("%", "%%") + ": %s", detail)
            raise InternalFailure(f"{kind}: {detail}")
        if offloaded.filtered:
            drops.count_filtered(batch.project_id, offloaded.filtered)
            # What the door then takes from the limits and counts accepted: the rest.
            offloaded.counts = lim.unfiltered(offloaded.counts, offloaded.filtered)
        if payload is not None:
            try:
                offloaded.results = pickle.loads(payload)
            except Exception as exc:  # a processor's value that only a worker can rebuild
                log.error("a decode worker's answer could not be read: %s: %s",
                          type(exc).__name__, exc)
                raise InternalFailure(f"reading a decode worker's answer: {exc}") from exc
        return offloaded
