"""Issue 24's scenario, and what a refusal costs (bounded, 127.0.0.1 only):

    python -m bench.limits [--seconds 15] [--postgres URL]

1. *B alone*: project B sends one error at a steady 20 a second; its latency.
2. *A floods*: project A, capped at `--a-rate` spans a second by its limit, sends
   OTLP/HTTP protobuf requests of 512 spans on 16 connections, each sending again as
   soon as it is answered (ignoring Retry-After: the worst client); B as in 1. A's
   statuses and B's latency.
3. *Cost*: the collector's CPU (every process) per request, for one error accepted,
   and the same request refused by its project's limit (before its body is read);
   and for a 512-span request accepted and refused.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import cpu, load, payloads
from bench.server import BENCH_KEY, BenchServer, database

B_KEY = "bench-key-quiet-project-b"
LIMITED_KEY = "bench-key-closed-project-c"
PROTOBUF = "application/x-protobuf"


def _config(folder: Path, a_rate: int) -> str:
    path = folder / "limits.yaml"
    path.write_text(f"""
auth:
  limits:
    projects:
      bench:
        span: {{rate: {a_rate}, burst: {a_rate}}}
      closed:
        error: {{rate: 0.001, burst: 1}}
        span: {{rate: 0.001, burst: 1}}
""")
    return str(path)


def _post(conn: http.client.HTTPConnection, path: str, key: str, body: bytes,
          content_type: str = "application/json") -> int:
    conn.request("POST", path, body, {"Authorization": f"Bearer {key}",
                                      "Content-Type": content_type})
    answer = conn.getresponse()
    answer.read()
    if answer.getheader("Connection", "").lower() == "close":
        conn.close()
    return answer.status


def quiet_project(address: tuple[str, int], seconds: float, rate: float,
                  out: dict[str, Any]) -> None:
    """B: one error every 1/rate s (open loop), latency of each."""
    conn = http.client.HTTPConnection(*address, timeout=30)
    body = payloads.error_single(1)
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    start = time.monotonic()
    n = 0
    while True:
        due = start + n / rate
        if due > start + seconds:
            break
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        sent = time.perf_counter()
        status = _post(conn, "/ingest/errors", B_KEY, body)
        latencies.append((time.perf_counter() - sent) * 1000)
        statuses[status] = statuses.get(status, 0) + 1
        n += 1
    latencies.sort()
    out.update(p50=load.percentile(latencies, 0.5), p99=load.percentile(latencies, 0.99),
               statuses=statuses, sent=n)


def _flooder(address: tuple[str, int], until: float, connections: int, seed: int,
             queue: Any) -> None:
    # Below the collector's priority: on two cores, the flood's own client would
    # otherwise take the CPU the collector answers B with.
    os.nice(10)
    template = payloads.traces_proto(seed)
    statuses: dict[int, int] = {}
    retry_after: set[str] = set()
    lock = threading.Lock()

    def one(index: int) -> None:
        conn = http.client.HTTPConnection(*address, timeout=30)
        # Rendered before the clock, and sent again in turn (a refused client sends
        # the same body again): rendering 512 spans per request would make the load
        # generator, not the collector, what the machine's cores are busy with.
        bodies = [template.render(seed * 100_000_000 + index * 1_000 + n, time.time_ns())
                  for n in range(8)]
        n = 0
        while time.monotonic() < until:
            n += 1
            body = bodies[n % len(bodies)]
            conn.request("POST", "/ingest/v1/traces", body,
                         {"Authorization": f"Bearer {BENCH_KEY}", "Content-Type": PROTOBUF})
            answer = conn.getresponse()
            answer.read()
            with lock:
                statuses[answer.status] = statuses.get(answer.status, 0) + 1
                if answer.status == 429:
                    retry_after.add(answer.getheader("Retry-After") or "")
            if answer.getheader("Connection", "").lower() == "close":
                conn.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.put((statuses, sorted(retry_after)))


def flood(address: tuple[str, int], seconds: float) -> tuple[dict[int, int], list[str]]:
    """A: 16 connections over two processes, for `seconds`."""
    queue: Any = multiprocessing.Queue()
    until = time.monotonic() + seconds
    procs = [multiprocessing.Process(target=_flooder, args=(address, until, 8, seed, queue))
             for seed in (1, 2)]
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    statuses: dict[int, int] = {}
    retry: set[str] = set()
    for found, after in results:
        for status, n in found.items():
            statuses[status] = statuses.get(status, 0) + n
        retry.update(after)
    return statuses, sorted(retry)


def cost_us(server: BenchServer, path: str, key: str, body: bytes, content_type: str,
            requests: int, connections: int = 1) -> tuple[float, dict[int, int]]:
    """Collector CPU µs per request, `requests` sent back to back on `connections`
    connections (a refusal from the key alone is answered after PACE_SECONDS: many
    connections overlap those waits), less what the idle collector spends meanwhile
    (its timers), measured just before."""
    assert server.http is not None
    address = server.http
    pids = server.pids()
    for _ in range(5):  # warm: the key, the limits
        _post(http.client.HTTPConnection(*address, timeout=30), path, key, body,
              content_type)
    idle_start, idle_wall = sum(cpu.process_seconds(pid) for pid in pids), time.monotonic()
    time.sleep(2)
    idle_rate = ((sum(cpu.process_seconds(pid) for pid in pids) - idle_start)
                 / (time.monotonic() - idle_wall))
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def send(n: int) -> None:
        conn = http.client.HTTPConnection(*address, timeout=30)
        for _ in range(n):
            status = _post(conn, path, key, body, content_type)
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    before, began = sum(cpu.process_seconds(pid) for pid in pids), time.monotonic()
    threads = [threading.Thread(target=send, args=(requests // connections,))
               for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(0.5)  # the writer's last commit
    after, wall = sum(cpu.process_seconds(pid) for pid in pids), time.monotonic() - began
    sent = requests // connections * connections
    return (after - before - idle_rate * wall) / sent * 1e6, statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--a-rate", type=int, default=5000)
    parser.add_argument("--b-rate", type=float, default=20)
    parser.add_argument("--postgres", default=None)
    parser.add_argument("--cost-requests", type=int, default=2000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sounding-bench-limits-"))
    with database(args.postgres, folder) as url:
        server = BenchServer(url, env={
            "SOUNDING_CONFIG": _config(folder, args.a_rate),
            "SOUNDING_API_KEYS": f"bench:{BENCH_KEY},quiet:{B_KEY},closed:{LIMITED_KEY}"})
        try:
            assert server.http is not None
            alone: dict[str, Any] = {}
            quiet_project(server.http, args.seconds, args.b_rate, alone)
            print(f"B alone: p50 {alone['p50']:.1f} ms, p99 {alone['p99']:.1f} ms, "
                  f"statuses {alone['statuses']}")
            during: dict[str, Any] = {}
            quiet = threading.Thread(target=quiet_project,
                                     args=(server.http, args.seconds, args.b_rate, during))
            pids = server.pids()
            cpu_before = sum(cpu.process_seconds(pid) for pid in pids)
            machine_before = cpu.machine_seconds()
            quiet.start()
            statuses, retry = flood(server.http, args.seconds)
            quiet.join()
            collector_cores = (sum(cpu.process_seconds(pid) for pid in pids)
                               - cpu_before) / args.seconds
            busy, total = (a - b for a, b in zip(cpu.machine_seconds(), machine_before,
                                                 strict=True))
            print(f"during the flood: the collector used {collector_cores:.2f} cores, "
                  f"the machine {busy / total * load.cpu_count():.2f} of "
                  f"{load.cpu_count()}")
            spans = 512 * statuses.get(202, 0)
            print(f"A flooding: {statuses} (Retry-After {retry}), "
                  f"{spans / args.seconds:,.0f} spans/s accepted")
            print(f"B during A's flood: p50 {during['p50']:.1f} ms, p99 {during['p99']:.1f} ms, "
                  f"statuses {during['statuses']} "
                  f"({during['p99'] / max(alone['p99'], 0.001):.1f}x its p99 alone)")
            error = payloads.error_single(3)
            spans_body = payloads.traces_proto(9).render(1, time.time_ns())
            for label, path, key, body, kind, n, conns in (
                    ("one error, accepted", "/ingest/errors", B_KEY, error,
                     "application/json", args.cost_requests, 1),
                    ("one error, refused by its limit", "/ingest/errors", LIMITED_KEY, error,
                     "application/json", args.cost_requests, 50),
                    ("512 spans, accepted", "/ingest/v1/traces", B_KEY, spans_body, PROTOBUF,
                     max(args.cost_requests // 10, 50), 1),
                    ("512 spans, refused by its limit", "/ingest/v1/traces", LIMITED_KEY,
                     spans_body, PROTOBUF, args.cost_requests, 50)):
                us, seen = cost_us(server, path, key, body, kind, n, conns)
                print(f"cost, {label}: {us:,.0f} µs collector CPU per request {seen}")
        finally:
            server.stop()
            server.cleanup()


if __name__ == "__main__":
    main()
