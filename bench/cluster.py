"""Several collectors on one PostgreSQL database (docs/scaling.md, "Scaling out").

N `sounding serve` processes, each on its own port as behind a load balancer (the
load workers spread over the ports), all writing one database. Two phases:

- spans: OTLP/HTTP protobuf at saturation; total spans/s, and the store must hold
  exactly what was acknowledged;
- errors: /ingest/errors/batch at saturation, every worker sending its own body of
  100 errors with a known fingerprint distribution; after it, each error group's
  count must equal what was acknowledged of it (the sum over acknowledged requests
  of its errors per body), to the unit: the collectors' upserts of one group race.

Rows `pg_cluster2` and `pg_cluster4`; run by `make bench` when `--postgres` is given.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench import cpu, load, payloads
from bench.scenarios import SCENARIOS
from bench.server import BENCH_KEY, BenchServer

ROWS = {"pg_cluster2": 2, "pg_cluster4": 4}
SPAN_CONNECTIONS = 8  # per collector
ERROR_CONNECTIONS = 4  # per collector


@dataclass
class ClusterResult:
    name: str
    collectors: int
    spans_per_s: float = 0.0
    spans_acked: int = 0
    spans_stored: int = 0
    collector_cores: float = 0.0
    writer_cores: float = 0.0
    machine_cores: float = 0.0
    errors_per_s: float = 0.0
    errors_acked: int = 0
    groups: int = 0
    groups_wrong: int = 0  # groups whose count differs from what was acknowledged
    statuses: dict[int, int] = field(default_factory=dict)
    exit_code: int | None = None
    skipped: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def cpu_us_per_span(self) -> float:
        return self.collector_cores / self.spans_per_s * 1e6 if self.spans_per_s else float("nan")

    @property
    def ok(self) -> bool:
        return (not self.skipped and self.exit_code == 0 and self.spans_acked > 0
                and self.spans_acked == self.spans_stored and self.errors_acked > 0
                and self.groups_wrong == 0)


def _specs(scenario: str, servers: list[BenchServer], start_at: float, warmup: float,
           duration: float, connections: int, prebuild: int) -> list[load.WorkerSpec]:
    specs = []
    for index, server in enumerate(servers):
        assert server.http is not None
        host, port = server.http
        specs.append(load.WorkerSpec(
            scenario=scenario, worker=index + int(start_at) % 1000 * 16, host=host, port=port,
            key=BENCH_KEY, connections=connections, start_at=start_at, warmup=warmup,
            duration=duration, prebuild=prebuild))
    return specs


def _phase(specs: list[load.WorkerSpec], servers: list[BenchServer], duration: float
           ) -> tuple[list[load.WorkerResult], dict[str, float]]:
    """Run the workers; CPU of the collectors (and of their writers) in the window."""
    import threading

    pids = [pid for server in servers for pid in server.pids()]
    writers = [pid for pid in pids if cpu.is_writer(pid)]
    samples: list[tuple[cpu.Sample, cpu.Sample]] = []
    start_at = specs[0].start_at

    def watch() -> None:
        for at in (start_at + min(1.0, duration / 4), start_at + duration - 0.1):
            time.sleep(max(0.0, at - time.time()))
            samples.append((cpu.sample(pids), cpu.sample(writers)))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    results = load.run(specs)
    watcher.join()
    usage: dict[str, float] = {}
    if len(samples) == 2:
        (a, wa), (b, wb) = samples
        whole = cpu.usage(a, b)
        usage = {"collector": whole.server_cores, "machine": whole.machine_cores,
                 "writer": cpu.usage(wa, wb).server_cores}
    return results, usage


def _expected_groups(results: list[load.WorkerResult], specs: list[load.WorkerSpec]
                     ) -> Counter[str]:
    expected: Counter[str] = Counter()
    for spec, result in zip(specs, results, strict=True):
        body = json.loads(payloads.errors_batch(spec.worker))
        per_body = Counter(error["fingerprint"] for error in body["errors"])
        for fingerprint, n in per_body.items():
            expected[fingerprint] += n * result.acked_requests
    return expected


def run_cluster(name: str, db_url: str, warmup: float, duration: float) -> ClusterResult:
    n = ROWS[name]
    result = ClusterResult(name, n)
    servers: list[BenchServer] = []
    try:
        for _ in range(n):  # each on its own port: port 0, no SO_REUSEPORT
            servers.append(BenchServer(db_url))
        prebuild = int((warmup + duration) * SCENARIOS["traces_proto"].prebuild_rate / n)
        specs = _specs("traces_proto", servers, time.time() + 2.0 + n + prebuild * 0.004 * n,
                       warmup, duration, SPAN_CONNECTIONS, prebuild)
        spans, usage = _phase(specs, servers, duration)
        merged = load.merge(spans)
        result.spans_per_s = merged["window_acked_records"] / duration
        result.spans_acked = merged["acked_records"]
        result.collector_cores = usage.get("collector", 0.0)
        result.writer_cores = usage.get("writer", 0.0)
        result.machine_cores = usage.get("machine", 0.0)
        result.statuses = dict(merged["statuses"])
        result.notes += merged["errors"]
        specs = _specs("errors_batch", servers, time.time() + 2.0, warmup, duration,
                       ERROR_CONNECTIONS, 0)
        errors, _ = _phase(specs, servers, duration)
        merged = load.merge(errors)
        result.errors_per_s = merged["window_acked_records"] / duration
        result.errors_acked = merged["acked_records"]
        for status, count in merged["statuses"].items():
            result.statuses[status] = result.statuses.get(status, 0) + count
        expected = _expected_groups(errors, specs)
    except Exception as exc:  # noqa: BLE001 - reported as the row's failure
        result.skipped = f"failed: {str(exc).strip().splitlines()[-1][:200]}"
        expected = Counter()
    finally:
        codes = [server.stop() for server in servers]
        result.exit_code = next((code for code in codes if code != 0), 0)
    if servers and not result.skipped:
        result.spans_stored = servers[0].count("SELECT count(*) FROM spans")
        stored = _group_counts(servers[0])
        result.groups = len(stored)
        result.groups_wrong = sum(1 for f in set(stored) | set(expected)
                                  if stored.get(f, 0) != expected.get(f, 0))
    for server in servers:
        if "Traceback" in server.log():
            result.notes.append(f"a traceback in the log: {server.log_path}")
        elif result.exit_code == 0:
            server.cleanup()
    return result


def _group_counts(server: BenchServer) -> dict[str, int]:
    from sqlalchemy import create_engine, text

    engine = create_engine(server.db_url)
    try:
        with engine.connect() as conn:
            found: Any = conn.execute(text("SELECT fingerprint, count FROM error_groups"))
            return {fingerprint: int(count) for fingerprint, count in found}
    finally:
        engine.dispose()


def describe(r: ClusterResult) -> str:
    if r.skipped:
        return f"  {r.name}: skipped ({r.skipped})"
    return (f"  {r.name}: {r.collectors} collectors, {r.spans_per_s:,.0f} spans/s in total, "
            f"{r.cpu_us_per_span:.1f} µs collector CPU/span (writers {r.writer_cores:.2f} of "
            f"{r.collector_cores:.2f} cores), machine {r.machine_cores:.2f} cores busy, stored "
            f"{r.spans_stored:,}/{r.spans_acked:,} acknowledged; errors {r.errors_per_s:,.0f}/s, "
            f"{r.errors_acked:,} acknowledged in {r.groups} groups, {r.groups_wrong} groups "
            f"off; answers {r.statuses}" + (f"; notes: {r.notes}" if r.notes else ""))
