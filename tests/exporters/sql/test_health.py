"""The SQL exporter reports its own health: unhealthy while its writer process is
not there to commit, so GET /health answers 503 exactly while ingest would."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import requests

from extensions.storage import StorageExtension
from runtime.plugins import build_exporter
from storage.store import Store
from tests.exporters.sql.test_writer import _writer_pid
from tests.support.server import Server


def test_healthy_only_between_start_and_shutdown(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    exporter = build_exporter("sql", {},
                              extensions={"storage": StorageExtension.over(store)})

    async def run() -> list[tuple[bool, str]]:
        seen = [await exporter.health()]
        await exporter.start()
        seen.append(await exporter.health())
        await exporter.shutdown()
        seen.append(await exporter.health())
        return seen

    try:
        assert asyncio.run(run()) == [(False, "not started"), (True, ""),
                                      (False, "the collector is shutting down")]
    finally:
        store.dispose()


def test_health_is_503_while_the_writer_restarts_then_200(
        start: Callable[..., Server]) -> None:
    server = start()
    session = requests.Session()

    def health() -> requests.Response:
        return session.get(server.base + "/health", timeout=10)

    assert health().status_code == 200
    old = _writer_pid(server)
    os.kill(old, signal.SIGKILL)
    # The new writer takes a few hundred milliseconds to start (a backoff below 0.1 s,
    # then a Python process importing SQLAlchemy): poll well within that.
    statuses: list[int] = []
    unhealthy: requests.Response | None = None
    deadline = time.monotonic() + 30
    while True:
        response = health()
        statuses.append(response.status_code)
        if response.status_code == 503 and unhealthy is None:
            unhealthy = response
        if unhealthy is not None and response.status_code == 200:
            break
        assert time.monotonic() < deadline, f"/health never went 503 then 200: {statuses}"
        time.sleep(0.005)
    body = unhealthy.json()
    assert body["status"] == "unavailable"
    # The body keeps its keys; the store itself is fine, only its writer restarts.
    assert set(body) == {"status", "uptime_seconds", "db_ok"} and body["db_ok"] is True
    recovered = response.json()
    assert recovered["status"] == "ok" and set(recovered) == set(body)
    assert _writer_pid(server) != old
    assert "the writer process stopped" in server.log()
