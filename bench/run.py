"""One scenario end to end: a fresh collector, saturation, half-rate latency, and
the check that the store holds exactly what was acknowledged."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from bench import cpu, load
from bench.scenarios import SCENARIOS, Scenario
from bench.server import BENCH_KEY, BenchCluster, BenchServer

LOAD_PROCESSES = 2


@dataclass
class ScenarioResult:
    name: str
    label: str
    unit: str
    saturation_per_s: float = 0.0
    half_rate_per_s: float = 0.0
    p50_ms: float = float("nan")
    p99_ms: float = float("nan")
    peak_rss_mb: float = 0.0
    acked: int = 0
    stored: int = 0
    exit_code: int | None = None
    statuses: dict[int, int] = field(default_factory=dict)
    load_cores: float = 0.0  # CPU the load generator used while saturating, in cores
    server_cores: float = 0.0  # CPU the collector used while saturating, in cores
    writer_cores: float = 0.0  # of which its writer processes (exporters/sql/writer.py)
    machine_cores: float = 0.0  # CPU the whole machine used meanwhile, in cores
    skipped: str = ""
    notes: list[str] = field(default_factory=list)
    processes: int = 1  # collector processes sharing the port (SO_REUSEPORT)

    @property
    def cpu_us_per_record(self) -> float:
        """Collector CPU time per record at saturation: steadier than the rate on a
        machine shared with other work."""
        if not self.saturation_per_s:
            return float("nan")
        return self.server_cores / self.saturation_per_s * 1e6

    @property
    def other_cores(self) -> float:
        """CPU used by neither the collector nor the load generator (other tenants)."""
        return max(0.0, self.machine_cores - self.server_cores - self.load_cores)

    @property
    def stored_ok(self) -> bool:
        return self.acked == self.stored and self.acked > 0


def _specs(scenario: Scenario, address: tuple[str, int], start_at: float, warmup: float,
           duration: float, rate: float, connections: int, prebuild: int,
           honour_retry_after: bool = False) -> list[load.WorkerSpec]:
    per = max(1, connections // LOAD_PROCESSES)
    return [load.WorkerSpec(scenario=scenario.name, worker=w + int(start_at) % 1000 * 16,
                            host=address[0], port=address[1], key=BENCH_KEY, connections=per,
                            start_at=start_at, warmup=warmup, duration=duration,
                            rate=rate / LOAD_PROCESSES,
                            prebuild=prebuild // LOAD_PROCESSES if scenario.unique_bodies else 0,
                            honour_retry_after=honour_retry_after)
            for w in range(LOAD_PROCESSES)]


def _phase(scenario: Scenario, server: BenchServer | BenchCluster, warmup: float,
           duration: float, rate: float = 0.0, connections: int = 0, prebuild: int = 0,
           honour_retry_after: bool = False, lead: float = 2.0) -> dict[str, Any]:
    address = server.grpc if scenario.transport == "grpc" else server.http
    assert address is not None
    # Workers build their bodies first; the window opens once all of them can be ready
    # (`lead` seconds for a worker process to start; the result's "late" says by how
    # much a worker missed that on a busy machine).
    start_at = time.time() + lead + prebuild * 0.002
    specs = _specs(scenario, address, start_at, warmup, duration, rate,
                   connections or scenario.connections, prebuild, honour_retry_after)
    samples: list[cpu.Sample] = []
    writer_samples: list[cpu.Sample] = []

    def watch() -> None:
        # Skip the first second of the window, when workers may still be connecting.
        for at in (start_at + min(1.0, duration / 4), start_at + duration - 0.1):
            time.sleep(max(0.0, at - time.time()))
            pids = server.pids()
            samples.append(cpu.sample(pids))
            writer_samples.append(cpu.sample([p for p in pids if cpu.is_writer(p)]))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    if scenario.transport == "grpc":
        from bench import grpc_load
        results = load.run(specs, grpc_load.run_worker)
    else:
        results = load.run(specs)
    watcher.join()
    merged = load.merge(results)
    merged["usage"] = cpu.usage(samples[0], samples[1]) if len(samples) == 2 else None
    merged["writer"] = (cpu.usage(writer_samples[0], writer_samples[1])
                        if len(writer_samples) == 2 else None)
    merged["load_cores"] = merged["cpu_seconds"] / (duration + warmup)
    return merged


def run_scenario(name: str, db_url: str, warmup: float, duration: float,
                 env: dict[str, str] | None = None, processes: int = 1) -> ScenarioResult:
    scenario = SCENARIOS[name]
    label = scenario.label + (f", {processes} processes" if processes > 1 else "")
    result = ScenarioResult(name, label, scenario.unit, processes=processes)
    server: BenchServer | BenchCluster = (
        BenchCluster(db_url, processes, env) if processes > 1 else BenchServer(db_url, env))
    try:
        if scenario.transport == "grpc" and server.grpc is None:
            result.skipped = "the collector printed no grpc:// listener"
            return result
        # Enough unique bodies for the window at a rate well above the target.
        prebuild = int((warmup + duration) * scenario.prebuild_rate)
        connections = scenario.connections * processes
        sat = _phase(scenario, server, warmup, duration, connections=connections,
                     prebuild=prebuild * processes)
        result.saturation_per_s = sat["window_acked_records"] / duration
        result.acked += sat["acked_records"]
        statuses = dict(sat["statuses"])
        if result.saturation_per_s > 0:
            half_requests = result.saturation_per_s / 2 / scenario.records
            result.half_rate_per_s = half_requests * scenario.records
            lat = _phase(scenario, server, min(warmup, 1.0), duration, rate=half_requests,
                         connections=max(connections * 2, 16),
                         prebuild=int(half_requests * (duration + 1) * 1.1)
                         if scenario.unique_bodies else 0)
            result.acked += lat["acked_records"]
            result.p50_ms = load.percentile(lat["latencies"], 0.50) * 1000
            result.p99_ms = load.percentile(lat["latencies"], 0.99) * 1000
            for status, n in lat["statuses"].items():
                statuses[status] = statuses.get(status, 0) + n
            result.notes += lat["errors"]
        result.statuses = statuses
        result.load_cores = sat["load_cores"]
        if sat["usage"] is not None:
            result.server_cores = sat["usage"].server_cores
            result.machine_cores = sat["usage"].machine_cores
        if sat["writer"] is not None:
            result.writer_cores = sat["writer"].server_cores
        result.notes += sat["errors"]
        result.peak_rss_mb = server.peak_rss_mb()
    finally:
        result.exit_code = server.stop()
    if not result.skipped:
        result.stored = server.count(scenario.stored_sql)
    if result.exit_code != 0:
        result.notes.append(f"exit code {result.exit_code}; log in {server.log_path}")
    elif "Traceback" in server.log():
        result.notes.append(f"a traceback in the log: {server.log_path}")
    else:
        server.cleanup()
    return result
