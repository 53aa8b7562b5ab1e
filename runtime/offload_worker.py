"""A decode worker process (`python -m runtime.offload_worker <fd>`), run by the
decode pool of runtime/offload.py under runtime/supervisor.py.

It is told at start which processors to build and which preparation each exporter
declared; for every request it is handed a body, the receiver's pure decode
function and an empty batch, and it answers with what `run` made of them. The
functions arrive as pickle sends a module-level function, by qualified name: the
worker imports their modules on first use, and nothing is copied per request but the
name (about 60 bytes, 2 to 3 µs of pickling per request at most).
It imports only what decoding needs (about 25 MB), ignores SIGINT and SIGTERM
(the collector stops it by closing the channel, after its last request) and exits
as soon as the collector is gone, even after a `kill -9` of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import resource
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model import limits
from model.component import Preparation, Processor
from model.errors import InvalidInput
from model.records import Batch
from runtime import channel, logsetup, usage

# A worker's address space: far above what decoding a 5 MiB body takes (about
# 200 MB), low enough that a runaway allocation in a processor is a MemoryError for
# that request instead of the kernel killing a process.
WORKER_ADDRESS_SPACE = 2 << 30

Spec = tuple[str, dict[str, Any]]  # (processor name, settings)


@dataclass(slots=True)
class Offloaded:
    """What a worker returns for one request."""

    # One item per exporter, for Pipeline.consume_prepared; None when no record could
    # be kept. Travels apart, as the message's payload (the bulk of the bytes).
    results: list[Any] | None
    dropped: int = 0
    reasons: list[str] = field(default_factory=list)
    # `dropped` by signal, when the decoded request says (a decoder filling several
    # Batch fields has `drops()`: receiver/sentry/items.py), so that the door counts
    # each record dropped under its own signal and category; else {}.
    drops: dict[str, int] = field(default_factory=dict)
    invalid: tuple[str, list[dict[str, Any]]] | None = None  # an InvalidInput, rebuilt there
    failure: tuple[str, str] | None = None  # (kind, detail): answered 500, logged there
    # The records decoded, per limit category (model/limits.py), before the processors:
    # what the project's limits take.
    counts: dict[str, int] = field(default_factory=dict)
    # Usage the processors counted here (runtime/usage.py), added in by the event loop.
    usage: list[Any] = field(default_factory=list)
    # Records the inbound filters took out, by signal (Batch.filtered), counted there.
    filtered: dict[str, int] = field(default_factory=dict)


class Stages:
    """What a worker runs after decoding: the processors, then each exporter's
    preparation (None: that exporter takes the processed batch)."""

    def __init__(self, processors: list[Processor],
                 preparations: list[tuple[str, Callable[..., Any], dict[str, Any]] | None]
                 ) -> None:
        self.processors = processors
        self.preparations = preparations


def name_of(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def check_handed_by_name(function: Any) -> None:
    """Refuse what a worker could not be handed: anything but a function pickle sends by
    name, one at a module's top level (not a lambda, a nested function or a string)."""
    if not callable(function):
        raise TypeError(f"{function!r} is not a function")
    try:
        handed = pickle.loads(pickle.dumps(function, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:  # noqa: BLE001 - pickle raises several kinds for this
        raise TypeError(f"{name_of(function)} is not defined at a module's top level, where a "
                        f"decode worker could import it ({type(exc).__name__}: {exc})") from exc
    if handed is not function:
        raise TypeError(f"{name_of(function)} is not the function its name imports")


def run(stages: Stages, decode: Callable[..., Any], args: tuple[Any, ...], batch: Batch,
        into: str, body: bytes) -> Offloaded:
    """Decode, process and prepare one request (runs in a worker). Total: whatever the
    request makes any step raise is returned as its answer."""
    fields = into.split(",")  # one Batch field, or several ("errors,spans")
    try:
        decoded = decode(body, *args)
        records = [getattr(decoded, name) for name in fields]
        dropped, reasons = decoded.dropped, decoded.reasons
        by_signal = decoded.drops() if hasattr(decoded, "drops") else {}
    except InvalidInput as exc:
        return Offloaded(None, invalid=(exc.message, exc.details))
    except RecursionError:
        # A decoder that recursed this deep was given input nested this deep.
        message = "the body is nested too deeply"
        return Offloaded(None, invalid=(message, [{"field": "body", "error": message}]))
    except Exception as exc:  # noqa: BLE001 - a decoder's bug; this request's 500
        return Offloaded(None, failure=_failure("decoding", exc))
    if not any(records):
        return Offloaded(None, dropped, reasons, drops=by_signal)
    counts: dict[str, int] = {}
    for name, kept in zip(fields, records, strict=True):
        setattr(batch, name, kept)
        category = limits.BATCH_FIELDS.get(name)
        if category is not None and kept:
            counts[category] = counts.get(category, 0) + len(kept)
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
        return Offloaded(None, failure=_failure(step, exc), usage=list(usage.drain().items()))
    return Offloaded(results, dropped, reasons, drops=by_signal, counts=counts,
                     usage=list(usage.drain().items()), filtered=batch.filtered)


def _failure(step: str, exc: BaseException) -> tuple[str, str]:
    """(kind, detail) of a failure: the kind names the step and exception type, so
    that each is logged once per interval however often clients cause it."""
    return f"{step}: {type(exc).__name__}", str(exc)[:300]


def _build(config: dict[str, Any]) -> Stages:
    # The registry is handed over by the service, not imported: it knows every
    # component type, exporters and their stores included, which this core module must
    # not depend on.
    build_processor = config["build_processor"]
    built = [build_processor(name, settings) for name, settings in config["processors"]]
    prepared: list[Preparation | None] = config["preparations"]
    preparations = [None if spec is None else (f"preparation {name_of(spec[0])}", *spec)
                    for spec in prepared]

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
    logsetup.configure_from_env()  # as the collector logs (runtime/supervisor.py)
    _cap_address_space()
    received = channel.receive(sock)
    if not received:
        return 0
    ((_, config), _), *_rest = received
    try:
        stages = _build(config)
    except Exception as exc:  # noqa: BLE001 - reported to the collector, which stops
        with contextlib.suppress(OSError):
            channel.send(sock, ("failed", f"{type(exc).__name__}: {exc}"))
        return 1
    try:
        channel.send(sock, ("ready",))
    except OSError:
        return 0  # the collector stopped while this worker was starting
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
                    # a memory file when large (runtime/channel.py).
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
    # runtime.offload_worker's classes rather than __main__'s.
    from runtime.offload_worker import main as module_main

    sys.exit(module_main(sys.argv))
