"""Decode workers: large requests are decoded, processed and prepared in other processes.

One event loop serves every connection; on its own it also decoded every span,
ran the processors and built the rows, about 16 µs a span, so a busy trace
receiver kept one core full while the second (the writer's) was half idle, and
every other request waited behind a 512-span body. Trace bodies of at least
`decode_min_bytes` now go to a small pool of worker processes instead. A worker
runs the same pure steps the event loop would: the receiver's decode function
(named as "module:function", so that this core module imports no receiver), the
configured processors, then each exporter's declared preparation
(`Exporter.preparation`; the SQL exporter's is storage/wire.py's encoding). It
returns one item per exporter, prepared or, for an exporter that declares none,
the processed batch, and the event loop hands them to the pipeline
(`Pipeline.consume_prepared`) without looking inside. The event loop is left
with HTTP and the hand-overs, about 3 µs a span.

Every worker builds its own copies of the configured processors (plugins too)
and starts them; a processor therefore must not count on state shared between
batches. Smaller requests and every other endpoint are decoded on the event loop,
where a round trip to a worker would cost more than it saves.

Workers are plain child processes (`python -m sounding.offload <fd>`) talking
over sounding/channel.py, like the writer process: they import only what decoding
needs (about 25 MB each), and they exit as soon as the collector is gone, even
after a `kill -9` of it.

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
`sounding_decode_worker_restarts_total` and started again at once.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import pickle
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sounding import channel
from sounding.component import Component, Processor
from sounding.errors import InternalFailure, InvalidInput, Overloaded, StoreUnavailable
from sounding.records import Batch

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# A worker that holds a request this long is stuck (a processor in an endless loop,
# say): it is killed, its requests are answered 503, and a new one is started.
ANSWER_TIMEOUT = 20.0
# A worker is started again at once, unless the last one died less than this ago
# (then after this delay: a crash loop must not take the event loop's core).
RESPAWN_DELAY = 1.0
# A worker's address space: far above what decoding a 5 MiB body takes (about
# 200 MB), low enough that a runaway allocation in a processor is a MemoryError for
# that request instead of the kernel killing a process.
WORKER_ADDRESS_SPACE = 2 << 30


Spec = tuple[str, dict[str, Any]]  # ("module:function", settings)


@dataclass(slots=True)
class Offloaded:
    """What a worker returns for one request."""

    # One item per exporter, for Pipeline.consume_prepared; None when no record could
    # be kept. Travels apart, as the message's payload (the bulk of the bytes).
    results: list[Any] | None
    dropped: int = 0
    reasons: list[str] = field(default_factory=list)
    invalid: tuple[str, list[dict[str, Any]]] | None = None  # an InvalidInput, rebuilt here
    failure: tuple[str, str] | None = None  # (kind, detail): answered 500, logged here


def default_workers() -> int:
    """One worker per core beyond the first (the event loop's), at most four; none on
    one core, where a worker would only take turns with the event loop."""
    return max(0, min(4, (os.cpu_count() or 1) - 1))


class _Worker:
    """One worker process and what it was given and has not answered yet."""

    def __init__(self, pool: DecodePool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.proc: subprocess.Popen[bytes] | None = None
        self.endpoint: channel.Endpoint | None = None
        self.pending: dict[int, asyncio.Future[tuple[Any, bytes | None]]] = {}
        self.ready: asyncio.Future[None] | None = None
        # Set when the request being handled was already answered (it timed out) and
        # the worker is killed for it: then no request left here is the culprit.
        self.culprit_answered = False

    async def spawn(self) -> None:
        parent, child = channel.pair()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sounding.offload", str(child.fileno())],
                pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL)
        finally:
            child.close()
        self.culprit_answered = False
        self.ready = asyncio.get_running_loop().create_future()
        self.endpoint = channel.Endpoint(parent, self._on_item, self._gone)
        self.endpoint.send(("config", {"processors": self.pool.processors,
                                       "preparations": self.pool.preparations}))
        try:
            await asyncio.wait_for(asyncio.shield(self.ready), START_TIMEOUT)
        except (TimeoutError, ConnectionError) as exc:
            await self.stop()
            raise RuntimeError(f"decode worker {self.index} did not start: {exc}") from exc

    def submit(self, seq: int, request: tuple[Any, ...], body: bytes
               ) -> asyncio.Future[tuple[Any, bytes | None]]:
        assert self.endpoint is not None
        future: asyncio.Future[tuple[Any, bytes | None]] = \
            asyncio.get_running_loop().create_future()
        self.pending[seq] = future
        self.endpoint.send(("submit", seq, *request), body)
        return future

    def _on_item(self, item: channel.Item) -> None:
        message, payload = item
        if message[0] == "ready":
            if self.ready is not None and not self.ready.done():
                self.ready.set_result(None)
        elif message[0] == "failed":  # the processors could not be built or started
            if self.ready is not None and not self.ready.done():
                self.ready.set_exception(ConnectionError(message[1]))
        else:
            _, seq, result = message
            future = self.pending.pop(seq, None)
            if future is not None and not future.done():
                future.set_result((result, payload))

    def _gone(self) -> None:
        if self.endpoint is not None:
            self.endpoint.close()
        self.endpoint = None
        if self.ready is not None and not self.ready.done():
            self.ready.set_exception(ConnectionError("the worker exited"))
            self.ready.exception()  # retrieved here if nobody awaits it any more
        pending, self.pending = self.pending, {}
        # The worker answers in the order it was given requests: the oldest one left
        # is the one it was handling, maybe the one that killed it. It is not retried
        # elsewhere (nor should its client retry it); those queued behind it are.
        for position, future in enumerate(pending.values()):
            if future.done():
                continue
            if position == 0 and not self.culprit_answered:
                future.set_exception(InternalFailure(
                    "the decode worker handling this request stopped"))
            else:
                future.set_exception(StoreUnavailable("a decode worker stopped; retry",
                                                      self.pool.retry_after))
        self.pool.worker_gone(self)

    def kill(self, why: str) -> None:
        """Stop a stuck worker now; its channel's end then answers what it held."""
        if self.proc is not None and self.proc.poll() is None:
            log.error("decode worker %d %s; killing it", self.index, why)
            self.culprit_answered = True
            self.proc.kill()

    async def stop(self) -> None:
        if self.endpoint is not None:
            self.endpoint.close()  # the worker finishes what it holds, sees EOF, exits
            self.endpoint = None
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), STOP_TIMEOUT)
        except TimeoutError:
            proc.kill()
            await asyncio.to_thread(proc.wait)


class DecodePool(Component):
    def __init__(self, processors: list[Spec], preparations: list[Spec | None], workers: int,
                 min_bytes: int, max_bytes: int, retry_after: int = 1) -> None:
        super().__init__("decode_pool")
        self.processors = processors  # (name, settings), as the pipeline configures them
        # Each exporter's `preparation()`, in the pipeline's order.
        self.preparations = preparations
        self.workers = workers
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.retry_after = retry_after
        self.in_flight_bytes = 0
        self._workers: list[_Worker] = []
        self._respawns: set[asyncio.Task[None]] = set()
        self._last_death = -RESPAWN_DELAY
        self._seq = 0
        self._started = False
        self._closing = False

    def wants(self, size: int) -> bool:
        return self._started and not self._closing and size >= self.min_bytes

    async def start(self) -> None:
        if self._started or self.workers <= 0:
            return
        self._closing = False
        self._workers = [_Worker(self, i) for i in range(self.workers)]
        # Every worker builds and starts the processors now, so that one that cannot be
        # built stops the collector at start-up rather than failing requests later.
        try:
            await asyncio.gather(*(worker.spawn() for worker in self._workers))
        except Exception:
            await self.shutdown()
            raise
        self._started = True

    async def shutdown(self) -> None:
        """Waits for what the workers hold: receivers stop before the pipeline does."""
        self._closing = True
        for task in self._respawns:
            task.cancel()
        workers, self._workers = self._workers, []
        for worker in workers:
            if worker.pending:
                await asyncio.gather(*worker.pending.values(), return_exceptions=True)
        await asyncio.gather(*(worker.stop() for worker in workers))

    async def submit(self, decode: str, args: tuple[Any, ...], batch: Batch, into: str,
                     body: bytes) -> Offloaded:
        """Decode `body` in a worker with the pure function `decode` ("module:function",
        called as `function(body, *args)`; it returns an object with `dropped`,
        `reasons` and the records in an attribute named `into`, like the field of
        `batch` they are put in), then run the processors and the exporters'
        preparations. InvalidInput (400) or InternalFailure (500) for that request;
        retryable errors when the workers cannot take it."""
        live = [w for w in self._workers if w.endpoint is not None]
        if self._closing:
            raise StoreUnavailable("the collector is shutting down", self.retry_after)
        if not live:
            raise StoreUnavailable("the decode workers are restarting", self.retry_after)
        size = len(body)
        if self.in_flight_bytes and self.in_flight_bytes + size > self.max_bytes:
            raise Overloaded("the decode workers are busy", self.retry_after)
        worker = min(live, key=lambda w: len(w.pending))
        self._seq += 1
        self.in_flight_bytes += size
        seq = self._seq
        future = worker.submit(seq, (decode, args, batch, into), body)
        try:
            result, payload = await asyncio.wait_for(asyncio.shield(future), ANSWER_TIMEOUT)
        except TimeoutError:
            # This request is what the worker is stuck on: 500, not to be retried.
            worker.pending.pop(seq, None)
            worker.kill(f"held a request for {ANSWER_TIMEOUT:.0f} s")
            raise InternalFailure("decoding this request did not finish") from None
        finally:
            self.in_flight_bytes -= size
        offloaded: Offloaded = result
        if offloaded.invalid is not None:
            raise InvalidInput(*offloaded.invalid)
        if offloaded.failure is not None:
            kind, detail = offloaded.failure
            # Logged once per kind per interval (sounding/logthrottle.py): the kind is
            # part of the template, the detail (which names the request) is not.
            log.error(f"a request ({into}) failed in a decode worker: "
                      + kind.replace("%", "%%") + ": %s", detail)
            raise InternalFailure(f"{kind}: {detail}")
        if payload is not None:
            try:
                offloaded.results = pickle.loads(payload)
            except Exception as exc:  # a processor's value that only a worker can rebuild
                log.error("a decode worker's answer could not be read: %s: %s",
                          type(exc).__name__, exc)
                raise InternalFailure(f"reading a decode worker's answer: {exc}") from exc
        return offloaded

    def worker_gone(self, worker: _Worker) -> None:
        if self._closing:
            return
        from sounding import metrics  # here: workers do not import prometheus_client

        metrics.DECODE_WORKER_RESTARTS.inc()
        code = worker.proc.poll() if worker.proc is not None else None
        log.error("decode worker %d stopped (exit code %s); starting it again", worker.index,
                  code)
        loop = asyncio.get_running_loop()
        delay = RESPAWN_DELAY if loop.time() - self._last_death < RESPAWN_DELAY else 0.0
        self._last_death = loop.time()
        task = loop.create_task(self._respawn(worker, delay))
        self._respawns.add(task)
        task.add_done_callback(self._respawns.discard)

    async def _respawn(self, worker: _Worker, delay: float) -> None:
        await worker.stop()
        while not self._closing:
            await asyncio.sleep(delay)
            delay = RESPAWN_DELAY
            try:
                await worker.spawn()
                return
            except Exception:  # noqa: BLE001 - keep trying; large trace requests get 503
                log.exception("could not start decode worker %d", worker.index)


# --- in the worker processes -------------------------------------------------

class Stages:
    """What a worker runs after decoding: the processors, then each exporter's
    preparation (None: that exporter takes the processed batch)."""

    def __init__(self, processors: list[Processor],
                 preparations: list[tuple[str, Callable[..., Any], dict[str, Any]] | None]
                 ) -> None:
        self.processors = processors
        self.preparations = preparations
        self._decoders: dict[str, Callable[..., Any]] = {}

    def decoder(self, spec: str) -> Callable[..., Any]:
        function = self._decoders.get(spec)
        if function is None:
            function = self._decoders[spec] = _imported(spec)
        return function


def _imported(spec: str) -> Callable[..., Any]:
    """The function a "module:function" string names."""
    module, _, name = spec.partition(":")
    function = getattr(importlib.import_module(module), name)
    if not callable(function):
        raise TypeError(f"{spec} is not a function")
    return function  # type: ignore[no-any-return]


def run(stages: Stages, decode: str, args: tuple[Any, ...], batch: Batch, into: str,
        body: bytes) -> Offloaded:
    """Decode, process and prepare one request (runs in a worker). Total: whatever the
    request makes any step raise is returned as its answer."""
    try:
        decoded = stages.decoder(decode)(body, *args)
    except InvalidInput as exc:
        return Offloaded(None, invalid=(exc.message, exc.details))
    except RecursionError:
        # A decoder that recursed this deep was given input nested this deep.
        message = "the body is nested too deeply"
        return Offloaded(None, invalid=(message, [{"field": "body", "error": message}]))
    except Exception as exc:  # noqa: BLE001 - a decoder's bug; this request's 500
        return Offloaded(None, failure=_failure("decoding", exc))
    records = getattr(decoded, into)
    if not records:
        return Offloaded(None, decoded.dropped, decoded.reasons)
    setattr(batch, into, records)
    step = "decoding"
    try:
        for processor in stages.processors:
            step = f"processor {processor.name}"
            batch = processor.process(batch)
        results: list[Any] = []
        for preparation in stages.preparations:
            if preparation is None:
                results.append(batch)
                continue
            step, function, settings = preparation
            results.append(function(batch, settings))
    except Exception as exc:  # noqa: BLE001 - answered 500 by the event loop, which logs it
        return Offloaded(None, failure=_failure(step, exc))
    return Offloaded(results, decoded.dropped, decoded.reasons)


def _failure(step: str, exc: BaseException) -> tuple[str, str]:
    """(kind, detail) of a failure: the kind names the step and exception type, so
    that each is logged once per interval however often clients cause it."""
    return f"{step}: {type(exc).__name__}", str(exc)[:300]


def _build(config: dict[str, Any]) -> Stages:
    from sounding.plugins import build_processor

    built = [build_processor(name, settings) for name, settings in config["processors"]]
    preparations = [None if spec is None else (f"preparation {spec[0]}", _imported(spec[0]),
                                               spec[1])
                    for spec in config["preparations"]]

    async def start() -> None:
        for processor in built:
            await processor.start()

    asyncio.run(start())
    return Stages(built, preparations)


def main(argv: list[str]) -> int:
    # The collector stops its workers by closing their channel, after its last request.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sock = socket.socket(fileno=int(argv[1]))
    _cap_address_space()
    received = channel.receive(sock)
    if not received:
        return 0
    ((_, config), _), *_rest = received
    try:
        stages = _build(config)
    except Exception as exc:  # noqa: BLE001 - reported to the collector, which stops
        channel.send(sock, ("failed", f"{type(exc).__name__}: {exc}"))
        return 1
    channel.send(sock, ("ready",))
    while True:
        try:
            items = channel.receive(sock)
        except OSError:
            items = None
        if items is None:
            return 0
        for (_, seq, decode, args, batch, into), body in items:
            result = run(stages, decode, args, batch, into, body or b"")
            del body, batch
            payload = None
            try:
                if result.results is not None:
                    # Pickled here, apart from the message: it rides as the payload, in
                    # a memory file when large (sounding/channel.py).
                    payload = pickle.dumps(result.results, protocol=pickle.HIGHEST_PROTOCOL)
                    result.results = None
            except Exception as exc:  # noqa: BLE001 - e.g. a processor left an unpicklable value
                result = Offloaded(None, failure=_failure("answering", exc))
            try:
                channel.send(sock, ("done", seq, result), payload)
            except OSError:
                return 0  # the collector is gone
            except Exception as exc:  # noqa: BLE001 - e.g. a reason that does not pickle
                channel.send(sock, ("done", seq, Offloaded(
                    None, failure=_failure("answering", exc))))


def _cap_address_space() -> None:
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = WORKER_ADDRESS_SPACE if hard == resource.RLIM_INFINITY else \
            min(hard, WORKER_ADDRESS_SPACE)
        if soft == resource.RLIM_INFINITY or soft > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # not permitted here: the OOM killer stays the bound
        pass


if __name__ == "__main__":
    # Run the copy imported under its own name, so that what the worker pickles names
    # sounding.offload's classes rather than __main__'s.
    from sounding.offload import main as module_main

    sys.exit(module_main(sys.argv))
