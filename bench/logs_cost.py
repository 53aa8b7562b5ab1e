"""CPU per record of the OTLP logs path, without HTTP: each step of a 512-record
protobuf request (bench/payloads.py's logs_proto, the bench's logs door) timed alone.

`python -m bench.logs_cost [repeats]` prints, on this tree, the minimum of several runs
of CPU time in microseconds per record of:

- `decode`: the body into LogRecords (receiver/otlp/decode_logs.py);
- `stages`: the default pipeline's processors (filters, scrub, classify, spanmetrics,
  exceptions, logexceptions, grouping, reopen) on the decoded batch;
- `wire`: the SQL exporter's preparation (storage/wire/batch.py's encode, pickling
  included), what a decode worker does after the stages;
- `writer`: the writer process's part, unpickling and BatchWriter.write, 8 requests per
  commit, on a fresh SQLite file with the writer's pragmas (the commit's fsync left out).

Run it on two commits to compare them. On a noisy machine count instructions instead:
`python -m bench.logs_cost wire` or `... writer` runs that part once inside
sys.call_tracing, which callgrind can collect alone:
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=sys_call_tracing \
        --callgrind-out-file=/dev/null python -m bench.logs_cost wire
prints the instructions ("Collected"); divide by the records it prints. `wire` counts
decode, stages and the preparation together (what a decode worker does per request).
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

from bench import payloads
from bench.decode_cost import per_record
from model.policy import Policy
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.exceptions import ExceptionsProcessor
from processors.filters import FiltersProcessor
from processors.grouping import GroupingProcessor
from processors.logexceptions import LogExceptionsProcessor
from processors.reopen import ReopenProcessor
from processors.scrub import ScrubProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.otlp.decode_logs import decode_logs_body
from storage import sqlite
from storage.rows import WireBatch
from storage.store import Store
from storage.wire.batch import encode
from storage.writer.commit import BatchWriter

RECORDS = payloads.LOGS_PER_REQUEST
PER_COMMIT = 8
POLICY = Policy(hash_key=b"k" * 32)
STAGES = [FiltersProcessor("filters"), ScrubProcessor("scrub"), ClassifyProcessor("classify"),
          SpanMetricsProcessor("spanmetrics"), ExceptionsProcessor("exceptions"),
          LogExceptionsProcessor("logexceptions"), GroupingProcessor("grouping"),
          ReopenProcessor("reopen")]


def decoded(body: bytes) -> Batch:
    batch = Batch(1, logs=decode_logs_body(body, True, payloads.BASE_NS).logs)
    batch.policy = POLICY
    return batch


def processed(batch: Batch) -> Batch:
    for stage in STAGES:
        batch = stage.process(batch)
    return batch


def worker(body: bytes) -> Any:
    """What a decode worker does with one request: decode, stages, the wire form."""
    return encode(processed(decoded(body)))


class Writing:
    """The writer process's side: wire batches in, one transaction per commit. Each
    request is `template` made unique, through `work` (a decode worker's part) to its
    pickled wire batch; logs by default (bench/span_stages.py passes spans)."""

    def __init__(self, folder: str, template: payloads.Template | None = None,
                 work: Callable[[bytes], Any] | None = None) -> None:
        path = Path(folder) / "writer.db"
        Store(f"sqlite:///{path}").upgrade()
        self.conn = sqlite3.connect(path, isolation_level=None)
        sqlite.apply_pragmas(self.conn, "NORMAL")
        self.writer = BatchWriter("sqlite")
        self.template = template or payloads.logs_proto(0)
        self.work = work or worker
        self.n = 0

    def payloads(self, requests: int) -> list[bytes]:
        """Pickled wire batches of the next `requests` requests, each one unique."""
        out = []
        for _ in range(requests):
            self.n += 1
            body = self.template.render(self.n, payloads.BASE_NS + self.n * 10**9)
            out.append(self.work(body).payload)
        return out

    def write(self, payloads_: list[bytes]) -> float:
        """CPU seconds of unpickling and writing, commits' fsync left out."""
        cursor, spent = self.conn.cursor(), 0.0
        for i in range(0, len(payloads_), PER_COMMIT):
            started = time.process_time()
            batches = [WireBatch._make(pickle.loads(p)) for p in payloads_[i:i + PER_COMMIT]]
            cursor.execute("BEGIN IMMEDIATE")
            self.writer.write(cursor, batches, int(time.time() * 1_000_000))
            spent += time.process_time() - started
            cursor.execute("COMMIT")
            self.writer.committed()
        return spent


def counted(part: str) -> None:
    """One run of `part` inside sys.call_tracing (for callgrind)."""
    template = payloads.logs_proto(0)
    bodies = [template.render(n, payloads.BASE_NS + n * 10**9) for n in range(1, 5)]
    if part == "wire":
        worker(bodies[0])  # imports and caches warmed
        sys.call_tracing(lambda: [worker(b) for b in bodies[1:]], ())
        print(f"records: {3 * RECORDS}")
        return
    with tempfile.TemporaryDirectory() as folder:
        writing = Writing(folder)
        writing.write(writing.payloads(PER_COMMIT))
        batch = writing.payloads(4 * PER_COMMIT)
        sys.call_tracing(writing.write, (batch,))
        print(f"records: {4 * PER_COMMIT * RECORDS}")
        writing.conn.close()


def main(repeats: int = 7) -> None:
    body = payloads.logs_proto(0).render(1, payloads.BASE_NS)
    copies = 4

    def timed(name: str, run: Callable[..., Any], before: Callable[[], Any] | None = None
              ) -> None:
        best = float("inf")
        for _ in range(repeats):
            ready = [before() if before else None for _ in range(copies)]
            started = time.process_time()
            for item in ready:
                if before:
                    run(item)
                else:
                    run()
            best = min(best, time.process_time() - started)
        print(f"{name:28s} {best / (copies * RECORDS) * 1e6:8.2f} us/record")

    timed("decode", lambda: decoded(body))
    timed("stages", processed, lambda: decoded(body))
    timed("wire (encode + pickle)", encode, lambda: processed(decoded(body)))
    whole = per_record(lambda: [worker(body) for _ in range(copies)], copies * RECORDS,
                       repeats)
    print(f"{'decode + stages + wire':28s} {whole:8.2f} us/record")
    with tempfile.TemporaryDirectory() as folder:
        writing = Writing(folder)
        writing.write(writing.payloads(PER_COMMIT))
        requests = 4 * PER_COMMIT
        best = min(writing.write(writing.payloads(requests)) for _ in range(repeats))
        cost = best / (requests * RECORDS) * 1e6
        print(f"{'writer (unpickle + write)':28s} {cost:8.2f} us/record")
        writing.conn.close()


if __name__ == "__main__":
    if sys.argv[1:2] in (["wire"], ["writer"]):
        counted(sys.argv[1])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
