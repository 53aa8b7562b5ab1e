"""CPU per point of the metrics path, without HTTP: decode, the wire form, and the
writer's part on a real SQLite file.

`python -m bench.metrics_cost [repeats [requests per commit]]` times, on this tree, the
bench's metrics export (200 cumulative series, protobuf, bench/payloads_metrics.py)
through decode, decode + Sounding's
processors + the wire encoding (what the collector's event loop or a decode worker
does), and the writer process's part: unpickling the wire batches and
BatchWriter.write, 8 requests per group commit, on a fresh SQLite file with the
writer process's pragmas (the commit's fsync is not timed: it is the disk's, not
CPU). Requests come from 64 templates (64 processes' series, as the bench row
sends), each with a later time than the last. Minimum of several runs, in
microseconds of CPU per point; run on two commits to compare them.

On a noisy machine count instructions instead: `python -m bench.metrics_cost wire`
or `... writer` runs that part once inside sys.call_tracing, which callgrind can
collect alone:
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=sys_call_tracing \
        --callgrind-out-file=/dev/null python -m bench.metrics_cost writer
prints the instructions ("Collected"); divide by the points it prints. `writer 1`
writes one request per commit, as a lightly loaded collector commits. `wire` counts
each process's second export, after its first: the series are known by then, as
after an SDK's first interval (storage/wire/points.py keeps their keys).
"""

from __future__ import annotations

import pickle
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import payloads_metrics
from bench.decode_cost import pipeline
from exporters.sql.writer import collect_less
from model.records import Batch
from receiver.otlp.decode_metrics import decode_metrics_body
from storage import sqlite
from storage.rows import WireBatch
from storage.store import Store
from storage.writer.commit import BatchWriter

SLOTS = 64
PER_COMMIT = 8
POINTS = payloads_metrics.POINTS_PER_REQUEST


def per_point(run: Callable[[], Any], points: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best / points * 1e6


class Writing:
    """The writer process's side: wire batches in, one transaction per commit, with
    the writer process's garbage collection (exporters/sql/writer.py)."""

    def __init__(self, folder: str, per_commit: int = PER_COMMIT) -> None:
        collect_less()
        self.per_commit = per_commit
        path = Path(folder) / "metrics.db"
        Store(f"sqlite:///{path}").upgrade()
        self.conn = sqlite3.connect(path, isolation_level=None)
        sqlite.apply_pragmas(self.conn, "NORMAL")
        self.writer = BatchWriter("sqlite")
        self.templates = [payloads_metrics.metrics_proto(i) for i in range(SLOTS)]
        self.now = time.time_ns()
        self.n = 0

    def payloads(self, requests: int) -> list[bytes]:
        """Pickled wire batches of the next `requests` requests, as the writer gets them."""
        out = []
        for _ in range(requests):
            self.n += 1
            self.now += 1_000_000
            body = self.templates[self.n % SLOTS].render(self.n, self.now)
            out.append(pipeline(Batch(1, metrics=decode_metrics_body(body, True).metrics))
                       .payload)
        return out

    def write(self, payloads: list[bytes]) -> float:
        """CPU seconds of unpickling and writing `payloads`, commits' fsync left out."""
        cursor, spent = self.conn.cursor(), 0.0
        for i in range(0, len(payloads), self.per_commit):
            started = time.process_time()
            batches = [WireBatch._make(pickle.loads(p))
                       for p in payloads[i:i + self.per_commit]]
            cursor.execute("BEGIN IMMEDIATE")
            self.writer.write(cursor, batches, int(time.time() * 1_000_000))
            spent += time.process_time() - started
            cursor.execute("COMMIT")
            self.writer.committed()
        return spent


def counted(part: str, per_commit: int = PER_COMMIT) -> None:
    """One run of `part` ("wire": decode + wire of 20 bodies; "writer": 128 requests
    written after 64 that make every series known, `per_commit` requests per commit)
    inside sys.call_tracing."""
    if part == "wire":
        templates = [payloads_metrics.metrics_proto(i) for i in range(20)]

        def wire(bodies: list[bytes]) -> list[Any]:
            return [pipeline(Batch(1, metrics=decode_metrics_body(b, True).metrics))
                    for b in bodies]

        # Each process's second export is counted: its series were seen in its first,
        # as a collector has seen an SDK's series after its first interval.
        wire([t.render(0, time.time_ns()) for t in templates])
        sys.call_tracing(wire, ([t.render(1, time.time_ns()) for t in templates],))
        print(f"points: {20 * POINTS}")
        return
    with tempfile.TemporaryDirectory() as folder:
        writing = Writing(folder, per_commit)
        writing.write(writing.payloads(SLOTS))
        payloads = writing.payloads(SLOTS * 2)
        sys.call_tracing(writing.write, (payloads,))
        print(f"points: {SLOTS * 2 * POINTS}")
        writing.conn.close()


def main(repeats: int = 7, per_commit: int = PER_COMMIT) -> None:
    body = payloads_metrics.metrics_proto(0).render(1, time.time_ns())
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("decode", lambda: decode_metrics_body(body, True)),
        ("decode + wire", lambda: pipeline(
            Batch(1, metrics=decode_metrics_body(body, True).metrics))),
    ]
    for name, run in cases:
        cost = per_point(lambda run=run: [run() for _ in range(20)], 20 * POINTS, repeats)
        print(f"{name:28s} {cost:8.2f} us/point")
    with tempfile.TemporaryDirectory() as folder:
        writing = Writing(folder, per_commit)
        writing.write(writing.payloads(SLOTS))  # every series seen once
        requests = SLOTS * 2
        best = min(writing.write(writing.payloads(requests)) for _ in range(repeats))
        print(f"{'writer (unpickle + write)':28s} {best / (requests * POINTS) * 1e6:8.2f} us/point")
        writing.conn.close()


if __name__ == "__main__":
    if sys.argv[1:2] in (["wire"], ["writer"]):  # then optionally requests per commit
        counted(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else PER_COMMIT)
    else:
        main(*(int(a) for a in sys.argv[1:3]))  # [repeats [requests per commit]]
