"""The forwarding exporter against a real local upstream answering scripted
statuses: 2xx deletes the row, 503 + Retry-After is honoured, 400 is permanent and
counted, and a row survives a stop to be sent by the next start."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from exporters.forward.exporter import ForwardExporter
from extensions.storage import StorageExtension
from model.errors import Overloaded
from model.records import Batch, Deploy, ErrorEvent
from runtime.plugins import build_exporter
from storage import outbox
from storage.store import Store
from tests.exporters.forward.upstream import Upstream

_names = iter(range(1_000_000))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path / 'sidecar.db'}")
    store.upgrade()
    yield store
    store.dispose()


def exporter(store: Store, upstream: Upstream, name: str | None = None,
             **config: Any) -> ForwardExporter:
    built = build_exporter(name or f"forward/t{next(_names)}",
                           {"endpoint": upstream.url, **config},
                           extensions={"storage": StorageExtension.over(store)})
    assert isinstance(built, ForwardExporter)
    return built


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def run(test: Callable[[Upstream], Awaitable[None]], port: int = 0) -> None:
    async def main() -> None:
        upstream = Upstream(port=port)
        upstream.start()
        try:
            await test(upstream)
        finally:
            upstream.stop()
    asyncio.run(main())


def errors(n: int) -> Batch:
    return Batch(1, errors=[ErrorEvent(f"fp{i}", "E", "m", [], 1_000 + i) for i in range(n)])


def test_sent_rows_are_deleted_and_counted(store: Store) -> None:
    async def test(upstream: Upstream) -> None:
        forward = exporter(store, upstream, headers={"Authorization": "Bearer k"})
        await forward.start()
        await forward.export(errors(3))
        await forward.export(Batch(1, deploys=[Deploy("abc", 5)]))
        await until(lambda: len(upstream.received) == 2)
        await until(lambda: forward.backlog.records == 0)
        assert not outbox.backlog(store, forward.name)
        paths = sorted(r.path for r in upstream.received)
        assert paths == ["/ingest/deploys", "/ingest/errors/batch"]
        assert all(r.headers["Authorization"] == "Bearer k" for r in upstream.received)
        assert metric("sounding_forward_sent_records_total", exporter=forward.name,
                      signal="errors") == 3
        await forward.shutdown()
    run(test)


def test_503_with_retry_after_is_honoured(store: Store) -> None:
    async def test(upstream: Upstream) -> None:
        upstream.script = [(503, {"Retry-After": "1"})]
        forward = exporter(store, upstream)
        await forward.start()
        await forward.export(errors(2))
        await until(lambda: len(upstream.received) == 2)
        first, second = upstream.received
        assert first.body == second.body
        assert second.at - first.at >= 0.9  # the upstream's wait, not the 0.5 s backoff
        await until(lambda: forward.backlog.records == 0)
        assert metric("sounding_forward_retries_total", exporter=forward.name,
                      signal="errors", reason="http_503") == 1
        assert metric("sounding_forward_sent_records_total", exporter=forward.name,
                      signal="errors") == 2
        await forward.shutdown()
    run(test)


def test_400_is_permanent_counted_and_not_retried(store: Store) -> None:
    async def test(upstream: Upstream) -> None:
        upstream.script = [(400, {})]
        forward = exporter(store, upstream, concurrent_requests=1)  # in order
        await forward.start()
        await forward.export(errors(4))
        await forward.export(errors(1))  # the next row is sent after it
        await until(lambda: len(upstream.received) == 2)
        await until(lambda: forward.backlog.records == 0)
        await asyncio.sleep(0.3)
        assert len(upstream.received) == 2
        assert not outbox.backlog(store, forward.name)
        assert metric("sounding_forward_failed_records_total", exporter=forward.name,
                      signal="errors", reason="http_400") == 4
        assert metric("sounding_forward_sent_records_total", exporter=forward.name,
                      signal="errors") == 1
        await forward.shutdown()
    run(test)


def test_unsent_rows_survive_a_stop_and_go_at_the_next_start(store: Store) -> None:
    async def test(upstream: Upstream) -> None:
        port = upstream.port
        upstream.stop()  # the upstream is down
        # A short backoff ceiling: the delay the first one drew before stopping is the
        # second one's wait at start (at most this ceiling), however long a loaded
        # machine kept the first one retrying.
        first = exporter(store, upstream, name="forward/restart", max_backoff_seconds=1)
        await first.start()
        await first.export(errors(2))  # acknowledged: committed to the queue
        await asyncio.sleep(0.3)
        assert metric("sounding_forward_retries_total", exporter="forward/restart",
                      signal="errors", reason="connection") >= 1
        assert await first.health() == (True, "")  # upstream down is not unhealthy
        await first.shutdown()
        assert outbox.backlog(store, "forward/restart")["errors"].records == 2
        upstream.port = port
        upstream.start()
        second = exporter(store, upstream, name="forward/restart", max_backoff_seconds=1)
        await second.start()
        assert second.backlog.records == 2
        await until(lambda: len(upstream.received) == 1, timeout=15)
        await until(lambda: second.backlog.records == 0)
        await second.shutdown()
    run(test)


def test_a_full_queue_refuses_with_overloaded_and_drops_nothing(store: Store) -> None:
    async def test(upstream: Upstream) -> None:
        upstream.stop()
        forward = exporter(store, upstream, queue_max_records=3)
        await forward.start()
        assert forward.admission_error() is None
        await forward.export(errors(2))
        await forward.export(errors(1))
        error = forward.admission_error()
        assert isinstance(error, Overloaded) and error.retry_after == 1
        with pytest.raises(Overloaded):
            await forward.export(errors(1))
        assert outbox.backlog(store, forward.name)["errors"].records == 3
        await forward.shutdown()
    run(test)


def test_signals_set_to_false_are_not_queued(store: Store) -> None:
    async def test(upstream: Upstream) -> None:
        forward = exporter(store, upstream, signals={"errors": False})
        await forward.start()
        await forward.export(errors(2))
        assert forward.backlog.records == 0 and not outbox.backlog(store, forward.name)
        await forward.shutdown()
    run(test)
