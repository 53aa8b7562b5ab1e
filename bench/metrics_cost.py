"""CPU per point of the metrics path, without HTTP: decode, the wire form, and the
writer's part on a real SQLite file.

`python -m bench.metrics_cost` times, on this tree, the bench's metrics export (50
series, protobuf, bench/payloads_metrics.py) through decode, decode + Sounding's
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
writes one request per commit, as a lightly loaded collector commits.

`growing` in place of `writer` (`... growing [requests per commit]`, or
`python -m bench.metrics_cost growing-cpu [per commit]` for the minimum of process CPU)
writes issue 23's shape instead (bench/payloads_metrics.py `growing_proto`): 200
cumulative series a request, 40 of them HTTP duration histograms, each request of a
process later than its last and grown since it, so every point is converted to a delta.
`growing-wire` counts decode + wire of that shape (20 processes' second requests).
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
from model.records import Batch
from receiver.otlp.decode_metrics import decode_metrics_body
from storage import sqlite
from storage.rows import WireBatch
from storage.store import Store
from storage.writer.commit import BatchWriter

SLOTS = 64
PER_COMMIT = 8
POINTS = payloads_metrics.SERIES_PER_REQUEST


def per_point(run: Callable[[], Any], points: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best / points * 1e6


class Writing:
    """The writer process's side: wire batches in, one transaction per commit."""

    def __init__(self, folder: str, per_commit: int = PER_COMMIT, growing: bool = False
                 ) -> None:
        self.per_commit = per_commit
        self.growing = growing
        self.points = payloads_metrics.GROWING_POINTS if growing else POINTS
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
            if self.growing:  # a process exports every SLOTS seconds
                self.now += 1_000_000_000
                body = payloads_metrics.growing_proto(self.n % SLOTS, self.n // SLOTS + 1,
                                                      self.now)
            else:
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
    """One run of `part` ("wire": decode + wire of 20 bodies; "writer" or "growing": 128
    requests written after 64 that make every series known, `per_commit` requests per
    commit) inside sys.call_tracing."""
    if part == "growing-wire":  # 20 processes' second requests, after their first
        now = time.time_ns()

        def wire(bodies: list[bytes]) -> list[Any]:
            return [pipeline(Batch(1, metrics=decode_metrics_body(b, True).metrics))
                    for b in bodies]

        wire([payloads_metrics.growing_proto(i, 1, now) for i in range(20)])
        sys.call_tracing(wire, ([payloads_metrics.growing_proto(i, 2, now + 1)
                                 for i in range(20)],))
        print(f"points: {20 * payloads_metrics.GROWING_POINTS}")
        return
    if part == "wire":
        bodies = [t.render(1, time.time_ns()) for t in
                  (payloads_metrics.metrics_proto(i) for i in range(20))]
        sys.call_tracing(lambda: [pipeline(Batch(1, metrics=decode_metrics_body(
            b, True).metrics)) for b in bodies], ())
        print(f"points: {20 * POINTS}")
        return
    with tempfile.TemporaryDirectory() as folder:
        writing = Writing(folder, per_commit, growing=part == "growing")
        writing.write(writing.payloads(SLOTS))
        payloads = writing.payloads(SLOTS * 2)
        sys.call_tracing(writing.write, (payloads,))
        print(f"points: {SLOTS * 2 * writing.points}")
        writing.conn.close()


def growing_cpu(per_commit: int, repeats: int = 7) -> None:
    """The minimum over `repeats` runs of the writer's process CPU per point, issue
    23's shape."""
    with tempfile.TemporaryDirectory() as folder:
        writing = Writing(folder, per_commit, growing=True)
        writing.write(writing.payloads(SLOTS))  # every series seen once
        requests = SLOTS * 2
        best = min(writing.write(writing.payloads(requests)) for _ in range(repeats))
        print(f"writer, growing, {per_commit} a commit: "
              f"{best / (requests * writing.points) * 1e6:8.2f} us/point")
        writing.conn.close()


def main(repeats: int = 7) -> None:
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
        writing = Writing(folder)
        writing.write(writing.payloads(SLOTS))  # every series seen once
        requests = SLOTS * 2
        best = min(writing.write(writing.payloads(requests)) for _ in range(repeats))
        print(f"{'writer (unpickle + write)':28s} {best / (requests * POINTS) * 1e6:8.2f} us/point")
        writing.conn.close()


if __name__ == "__main__":
    if sys.argv[1:2] in (["wire"], ["writer"], ["growing"], ["growing-wire"]):
        counted(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else PER_COMMIT)
    elif sys.argv[1:2] == ["growing-cpu"]:
        growing_cpu(int(sys.argv[2]) if len(sys.argv) > 2 else PER_COMMIT)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
