"""`python -m bench.start_cost [--runs N] [--traces]`: the CPU one collector start
costs, as the test suite starts them (tests/support/server.py: one serve process on a
copy of a migrated SQLite file): `sounding serve` started, polled until `/health`
answers 200 (with --traces: one small OTLP trace request answered 202, so the decode
workers start too), stopped with SIGTERM, and the user + system CPU of the process and
every child it reaped (the writer, decode workers), from getrusage. Min and median of
`--runs`: the machine is shared, and the minimum is the least disturbed start.
"""

from __future__ import annotations

import argparse
import resource
import signal
import statistics
import tempfile
import time
from pathlib import Path

import requests

from tests.support.server import start_server
from tests.support.templates import migrated_sqlite

TRACE = {"resourceSpans": [{"resource": {"attributes": [
    {"key": "service.name", "value": {"stringValue": "bench"}}]},
    "scopeSpans": [{"spans": [{"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1",
                               "name": "GET /", "kind": 2,
                               "startTimeUnixNano": str(time.time_ns()),
                               "endTimeUnixNano": str(time.time_ns() + 1000)}]}]}]}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_start(folder: Path, traces: bool) -> tuple[float, float]:
    """(CPU seconds of every process of the start, wall seconds until healthy)."""
    url = migrated_sqlite(folder / "sounding.db")
    before = children_cpu()
    began = time.monotonic()
    server = start_server(url)
    while requests.get(server.base + "/health", timeout=10).status_code != 200:
        time.sleep(0.01)
    healthy = time.monotonic() - began
    if traces:
        answer = server.post("/ingest/v1/traces", TRACE)
        assert answer.status_code == 202, answer.text
    code = server.stop(signal.SIGTERM)
    assert code == 0, server.log()
    return children_cpu() - before, healthy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--traces", action="store_true")
    args = parser.parse_args()
    cpu, wall = [], []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            spent, healthy = one_start(Path(folder), args.traces)
        cpu.append(spent)
        wall.append(healthy)
        print(f"run {run + 1}: {spent:.3f} s CPU, healthy after {healthy:.2f} s", flush=True)
    print(f"CPU per start: min {min(cpu):.3f} s, median {statistics.median(cpu):.3f} s; "
          f"healthy after: min {min(wall):.2f} s")


if __name__ == "__main__":
    main()
