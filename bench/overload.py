"""Twice saturation for a minute: the collector must shed with 503 rather than
grow, stay under its memory bound, keep answering /health, and keep everything
it acknowledged."""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field

from bench import run
from bench.scenarios import SCENARIOS
from bench.server import BenchServer

CONNECTIONS = 64


@dataclass
class OverloadResult:
    offered_per_s: float
    seconds: float
    accepted_per_s: float = 0.0
    statuses: dict[int, int] = field(default_factory=dict)
    peak_rss_mb: float = 0.0
    health_checks: int = 0
    health_failures: int = 0  # not 200, or no answer within 5 s
    health_max_ms: float = 0.0
    acked: int = 0
    stored: int = 0
    exit_code: int | None = None

    @property
    def shed(self) -> int:
        return self.statuses.get(503, 0)

    @property
    def stored_ok(self) -> bool:
        return self.acked == self.stored and self.acked > 0


def _poll_health(server: BenchServer, stop: threading.Event, out: OverloadResult) -> None:
    assert server.http is not None
    while not stop.is_set():
        started = time.monotonic()
        try:
            conn = http.client.HTTPConnection(*server.http, timeout=5)
            conn.request("GET", "/health")
            ok = conn.getresponse().status == 200
            conn.close()
        except OSError:
            ok = False
        out.health_checks += 1
        out.health_failures += not ok
        out.health_max_ms = max(out.health_max_ms, (time.monotonic() - started) * 1000)
        stop.wait(0.5)


def run_overload(db_url: str, saturation_per_s: float, seconds: float,
                 name: str = "traces_proto") -> OverloadResult:
    scenario = SCENARIOS[name]
    offered = 2 * saturation_per_s
    result = OverloadResult(offered, seconds)
    server = BenchServer(db_url)
    stop = threading.Event()
    poller = threading.Thread(target=_poll_health, args=(server, stop, result), daemon=True)
    try:
        poller.start()
        rate = offered / scenario.records
        merged = run._phase(scenario, server, 1.0, seconds, rate=rate, connections=CONNECTIONS,
                            prebuild=min(int(rate * (seconds + 1)), 1000)
                            if scenario.unique_bodies else 0)
        result.statuses = merged["statuses"]
        result.acked = merged["acked_records"]
        result.accepted_per_s = merged["window_acked_records"] / seconds
        result.peak_rss_mb = server.peak_rss_mb()
    finally:
        stop.set()
        poller.join(10)
        result.exit_code = server.stop()
    result.stored = server.count(scenario.stored_sql)
    if result.exit_code == 0:
        server.cleanup()
    return result
