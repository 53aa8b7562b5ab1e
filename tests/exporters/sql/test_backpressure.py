"""Back-pressure instead of growth: a full queue and an unreachable store answer
503 with Retry-After, and ingest recovers by itself when the store is back."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from tests.exporters.senders import SPANS_PER_REQUEST, error_batch, trace_request
from tests.support.server import Server
from tests.support.tcp_proxy import TcpProxy


def wait_until(condition: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def post_spans(server: Server, trace_id: str) -> requests.Response:
    return requests.post(server.base + "/ingest/v1/traces",
                         data=trace_request(bytes.fromhex(trace_id)),
                         headers={"Authorization": f"Bearer {server.key}",
                                  "Content-Type": "application/x-protobuf"}, timeout=60)


@pytest.mark.parametrize("bound", ["QUEUE_MAX_RECORDS", "QUEUE_MAX_BYTES"])
def test_a_full_queue_answers_503_with_retry_after(start: Callable[..., Server],
                                                   tmp_path: Path, bound: str) -> None:
    db = tmp_path / "sounding.db"
    server = start(f"sqlite:///{db}", env={f"SOUNDING__EXPORTERS__SQL__{bound}": "1"})
    # Hold SQLite's write lock from here: the collector's writer waits behind it, so
    # the first request stays pending and fills the (tiny) queue for as long as we like.
    lock = sqlite3.connect(db, isolation_level=None, timeout=30)
    lock.execute("BEGIN IMMEDIATE")
    first_tag = uuid.uuid4().hex
    first: list[requests.Response] = []
    sender = threading.Thread(target=lambda: first.append(
        server.post("/ingest/errors/batch", error_batch(first_tag))))
    try:
        sender.start()
        wait_until(lambda: (server.metric("sounding_queue_records") or 0) >= 10,
                   what="the first request to be queued")
        overflow_tag = uuid.uuid4().hex
        refused = server.post("/ingest/errors/batch", error_batch(overflow_tag))
        refused_spans = post_spans(server, overflow_tag)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
        sender.join(60)
    for response in (refused, refused_spans):
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "1"
        assert "queue is full" in response.json()["error"]
    # The request that was queued is committed once the lock is gone.
    assert first[0].status_code == 202
    stored = {r.request_id for r in server.query("SELECT request_id FROM error_events")}
    assert {f"{first_tag}-{i}" for i in range(10)} == stored
    assert server.query("SELECT count(*) FROM spans")[0][0] == 0
    # Refused at the door, before the body was decoded: counted per endpoint.
    assert server.metric("sounding_requests_refused_total", endpoint="errors_batch",
                  reason="unavailable") == 1
    assert server.metric("sounding_requests_refused_total", endpoint="traces",
                  reason="unavailable") == 1
    assert server.metric("sounding_queue_records") == 0


def _health(server: Server) -> requests.Response:
    return requests.get(server.base + "/health", timeout=10)


@pytest.mark.postgres
def test_postgres_out_of_reach_is_503_and_ingest_recovers_by_itself(
        start: Callable[..., Server], pg_url: str) -> None:
    with TcpProxy() as proxy:
        server = start(proxy.url_for(pg_url))
        before = uuid.uuid4().hex
        assert post_spans(server, before).status_code == 202

        proxy.cut()
        during = uuid.uuid4().hex
        refused = server.post("/ingest/errors/batch", error_batch(during))
        assert refused.status_code == 503
        assert refused.headers["Retry-After"] == "1"
        refused_spans = post_spans(server, during)
        assert refused_spans.status_code == 503
        assert "Retry-After" in refused_spans.headers
        # These were decoded, then the commit failed: their records are counted.
        assert server.metric("sounding_records_refused_total", signal="errors",
                      reason="unavailable") == 10
        assert server.metric("sounding_records_refused_total", signal="spans",
                      reason="unavailable") == SPANS_PER_REQUEST
        # /health pings the store (reusing a ping for up to a second).
        wait_until(lambda: _health(server).status_code == 503, what="/health to turn 503")
        body = _health(server).json()
        assert body["db_ok"] is False and body["status"] != "ok"

        proxy.restore()
        after = uuid.uuid4().hex
        wait_until(lambda: post_spans(server, after).status_code == 202, timeout=30,
                   what="ingest to recover")
        assert server.post("/ingest/errors/batch", error_batch(after)).status_code == 202
        wait_until(lambda: _health(server).status_code == 200, what="/health to recover")
        assert _health(server).json()["db_ok"] is True

        counts = server.spans_per_trace()
        assert counts == {before: SPANS_PER_REQUEST, after: SPANS_PER_REQUEST}
        stored = {r.request_id for r in server.query("SELECT request_id FROM error_events")}
        assert stored == {f"{after}-{i}" for i in range(10)}
        assert server.stop() == 0
