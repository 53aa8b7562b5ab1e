"""Twice saturation for a minute: the collector must shed with 503 rather than
grow, stay under its memory bound, keep answering /health, and keep everything
it acknowledged.

Also on its own, for one scenario (bounded, 127.0.0.1 only):

    python -m bench.overload --scenario errors_single --seconds 20
    python -m bench.overload --env SOUNDING__SERVICE__MAX_EVENT_LOOP_LAG_MS=0  # lag not watched

measures the scenario's saturation (closed loop, 5 s), then offers twice that
open loop and reports requests/s accepted, the share of 503s and /health's p99.
"""

from __future__ import annotations

import argparse
import http.client
import sys
import threading
import time
from dataclasses import dataclass, field

from bench import load, run
from bench.scenarios import SCENARIOS
from bench.server import BENCH_KEY, BenchServer

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
    health_ms: list[float] = field(default_factory=list)
    acked: int = 0
    stored: int = 0
    exit_code: int | None = None
    health_interval: float = 0.5

    @property
    def shed(self) -> int:
        return self.statuses.get(503, 0)

    @property
    def health_p99_ms(self) -> float:
        return load.percentile(sorted(self.health_ms), 0.99)

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
        elapsed_ms = (time.monotonic() - started) * 1000
        out.health_max_ms = max(out.health_max_ms, elapsed_ms)
        out.health_ms.append(elapsed_ms)
        stop.wait(out.health_interval)


def run_overload(db_url: str, saturation_per_s: float, seconds: float,
                 name: str = "traces_proto", env: dict[str, str] | None = None,
                 health_interval: float = 0.5, honour_retry_after: bool = False
                 ) -> OverloadResult:
    scenario = SCENARIOS[name]
    offered = 2 * saturation_per_s
    result = OverloadResult(offered, seconds, health_interval=health_interval)
    server = BenchServer(db_url, env)
    stop = threading.Event()
    poller = threading.Thread(target=_poll_health, args=(server, stop, result), daemon=True)
    try:
        poller.start()
        rate = offered / scenario.records
        merged = run._phase(scenario, server, 1.0, seconds, rate=rate, connections=CONNECTIONS,
                            prebuild=min(int(rate * (seconds + 1)), 1000)
                            if scenario.unique_bodies else 0,
                            honour_retry_after=honour_retry_after)
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


def saturation(db_url: str, name: str, seconds: float,
               env: dict[str, str] | None = None) -> float:
    """Records per second one collector acknowledges, closed loop."""
    scenario = SCENARIOS[name]
    server = BenchServer(db_url, env)
    try:
        merged = run._phase(scenario, server, 1.0, seconds,
                            prebuild=int((seconds + 1) * scenario.prebuild_rate))
    finally:
        server.stop()
    server.cleanup()
    return float(merged["window_acked_records"]) / seconds


def held_bodies(db_url: str, connections: int, env: dict[str, str] | None = None
                ) -> dict[str, float]:
    """Issue 9's slow-body attack: `connections` connections each send a 4.9 KB gzip
    body that inflates to 5 MB and withhold its last byte, while /health is polled
    every 50 ms. Returns the collector's RSS growth, the answers, /health's worst."""
    import gzip
    import json
    import socket

    body = gzip.compress(json.dumps({"message": "x" * 5_000_000}).encode(), 9)
    server = BenchServer(db_url, env)
    assert server.http is not None
    host, port = server.http
    head = (f"POST /ingest/errors HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {BENCH_KEY}\r\nContent-Type: application/json\r\n"
            f"Content-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    result = OverloadResult(0.0, 0.0, health_interval=0.05)
    stop = threading.Event()
    poller = threading.Thread(target=_poll_health, args=(server, stop, result), daemon=True)
    time.sleep(1.0)
    rss_before = _rss_mb(server.proc.pid)
    poller.start()
    socks, answered = [], 0
    try:
        for _ in range(connections):
            sock = socket.create_connection((host, port), timeout=5)
            sock.sendall(head + body[:-1])
            socks.append(sock)
        time.sleep(3.0)
        grown = _rss_mb(server.proc.pid) - rss_before
        stop.set()
        for sock in socks:
            sock.settimeout(0.2)
            try:
                answered += sock.recv(64).startswith(b"HTTP/1.1 503")
            except OSError:
                pass
    finally:
        stop.set()
        poller.join(10)
        for sock in socks:
            sock.close()
        server.stop()
    server.cleanup()
    return {"rss_growth_mib": grown, "refused_503": answered,
            "health_p99_ms": result.health_p99_ms, "health_max_ms": result.health_max_ms,
            "health_checks": result.health_checks}


def _rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status").read().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main(argv: list[str]) -> int:
    import tempfile
    import uuid

    parser = argparse.ArgumentParser(prog="python -m bench.overload", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="errors_single", choices=sorted(SCENARIOS))
    parser.add_argument("--seconds", type=float, default=20.0, help="at most 30")
    parser.add_argument("--saturation", type=float, default=0.0,
                        help="records/s; measured first (5 s) when not given")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="collector environment, e.g. "
                             "SOUNDING__SERVICE__MAX_EVENT_LOOP_LAG_MS=0")
    parser.add_argument("--honour-retry-after", action="store_true",
                        help="a connection answered 503 waits Retry-After (1 s) before its "
                             "next request, as OpenTelemetry exporters do")
    parser.add_argument("--held-bodies", type=int, default=0, metavar="N",
                        help="instead: N connections each holding a 4.9 KB gzip body that "
                             "inflates to 5 MB, last byte withheld")
    args = parser.parse_args(argv)
    seconds = min(args.seconds, 30.0)
    env = dict(item.split("=", 1) for item in args.env)
    if args.held_bodies:
        with tempfile.TemporaryDirectory(prefix="sounding-overload-") as tmp:
            held = held_bodies(f"sqlite:///{tmp}/held.db", args.held_bodies, env)
        print(f"{args.held_bodies} held gzip bodies: RSS +{held['rss_growth_mib']:.0f} MiB, "
              f"{held['refused_503']:.0f} answered 503, /health p99 "
              f"{held['health_p99_ms']:.0f} ms, max {held['health_max_ms']:.0f} ms "
              f"({held['health_checks']:.0f} checks)")
        return 0
    with tempfile.TemporaryDirectory(prefix="sounding-overload-") as tmp:
        sat = args.saturation or saturation(
            f"sqlite:///{tmp}/sat-{uuid.uuid4().hex[:8]}.db", args.scenario, 5.0, env)
        result = run_overload(f"sqlite:///{tmp}/over-{uuid.uuid4().hex[:8]}.db", sat, seconds,
                              args.scenario, env, health_interval=0.1,
                              honour_retry_after=args.honour_retry_after)
    unit = SCENARIOS[args.scenario].unit
    answers = sum(result.statuses.values()) or 1
    print(f"{args.scenario}: saturation {sat:,.0f} {unit}/s, offered {result.offered_per_s:,.0f}"
          f"/s for {seconds:.0f} s")
    print(f"  accepted {result.accepted_per_s:,.0f} {unit}/s, answers {result.statuses}, "
          f"503 share {result.shed / answers:.1%}")
    print(f"  /health p99 {result.health_p99_ms:.0f} ms, max {result.health_max_ms:.0f} ms, "
          f"failures {result.health_failures}/{result.health_checks}; peak RSS "
          f"{result.peak_rss_mb:.0f} MB; stored {result.stored:,}/{result.acked:,}")
    return 0 if result.stored_ok and result.exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
