"""Issue 24's scenario as a test: project A, capped by its limit, floods OTLP spans on
eight connections (each sending again as soon as it is answered, Retry-After
ignored: the worst client) while project B sends single errors at 20 a second. A's
excess gets its protocol's refusal, 429 with Retry-After, and nothing else; B is
never refused. B's latency is measured in bench/limits.py (bench/RESULTS.md), not
here: a shared test machine's timings are not the collector's."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from tests.receiver.otlp_helpers import random_trace_id, request_of, span_pb
from tests.receiver.sentry.helpers import KEY, KEYS, OTHER_KEY
from tests.receiver.test_limits import ERROR, config
from tests.support.server import Server

SECONDS = 3.0
SPANS = 50  # per request
RATE = 500  # A's spans a second: ten requests


def send(address: tuple[str, int], path: str, key: str, body: bytes, content_type: str,
         until: float, every: float, seen: list[tuple[int, str | None]]) -> None:
    conn = http.client.HTTPConnection(*address, timeout=30)
    next_at = time.monotonic()
    while time.monotonic() < until:
        if every:
            next_at += every
        conn.request("POST", path, body, {"Authorization": f"Bearer {key}",
                                          "Content-Type": content_type})
        answer = conn.getresponse()
        answer.read()
        seen.append((answer.status, answer.getheader("Retry-After")))
        if answer.getheader("Connection", "").lower() == "close":
            conn.close()
        if every:
            time.sleep(max(0.0, next_at - time.monotonic()))


def test_a_capped_project_flooding_is_refused_and_the_quiet_one_never(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path) -> None:
    server = start(sqlite_url, keys=KEYS, config=config(
        tmp_path, f"        span: {{rate: {RATE}, burst: {RATE}}}"))
    parts = urlsplit(server.base)
    address = (parts.hostname or "127.0.0.1", parts.port or 80)
    body = request_of(*(span_pb(random_trace_id(), f"{i + 1:016x}")
                        for i in range(SPANS))).SerializeToString()
    error = json.dumps(ERROR).encode()
    flood: list[tuple[int, str | None]] = []
    quiet: list[tuple[int, str | None]] = []
    began = time.monotonic()
    until = began + SECONDS
    threads = [threading.Thread(target=send, args=(
        address, "/ingest/v1/traces", KEY, body, "application/x-protobuf", until, 0, flood))
        for _ in range(8)]
    threads.append(threading.Thread(target=send, args=(
        address, "/ingest/errors", OTHER_KEY, error, "application/json", until, 1 / 20,
        quiet)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.monotonic() - began
    statuses = {status for status, _ in flood}
    assert statuses == {202, 429}, statuses
    assert all(after is not None and int(after) >= 1 for status, after in flood
               if status == 429)
    accepted = sum(1 for status, _ in flood if status == 202) * SPANS
    # The burst and the rate over the flood, and one request into debt.
    assert accepted <= RATE + RATE * took + SPANS, (accepted, took)
    assert quiet and {status for status, _ in quiet} == {202}, quiet
