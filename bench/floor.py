"""The floor of the stack, in one process, on the same span payloads.

- protobuf parse alone: `ExportTraceServiceRequest.ParseFromString`, the C parser;
- SQLite `executemany` alone: the very rows Sounding stores for those spans, into
  the real schema, with the writer's settings, one commit per ten requests;
- for information, Sounding's own Python work per span: decode, processors, rows.

No collector can be faster than parsing and inserting; Sounding's spans/s is
reported as a fraction of the two done back to back on one core.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from bench import payloads
from exporters.sql.writer import Database
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.otlp.decode_traces import spans_from_proto
from storage.store import Store
from storage.wire.batch import encode_batch
from storage.writer.commit import BatchWriter

REQUESTS_PER_COMMIT = 10


@dataclass
class Floor:
    parse_per_s: float
    insert_per_s: float
    python_per_s: float  # decode + processors + wire rows, no I/O

    @property
    def combined_per_s(self) -> float:
        """Parse then insert, back to back on one core."""
        return 1.0 / (1.0 / self.parse_per_s + 1.0 / self.insert_per_s)


def measure(requests: int = 200) -> Floor:
    template = payloads.traces_proto(7)
    now = time.time_ns()
    bodies = [template.render(n, now + n * 10_000_000) for n in range(requests)]
    spans = requests * payloads.SPANS_PER_REQUEST

    started = time.perf_counter()
    parsed = []
    for body in bodies:
        message = ExportTraceServiceRequest()
        message.ParseFromString(body)
        parsed.append(message)
    parse_s = time.perf_counter() - started

    processors = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics")]
    started = time.perf_counter()
    wires = []
    for message in parsed:
        batch = Batch(project_id=1, spans=spans_from_proto(message).spans)
        for processor in processors:
            batch = processor.process(batch)
        wires.append(encode_batch(batch))
    python_s = time.perf_counter() - started

    writer = BatchWriter("sqlite")
    commits = [[(wire.project_id, *span) for wire in wires[i:i + REQUESTS_PER_COMMIT]
                for span in wire.spans] for i in range(0, len(wires), REQUESTS_PER_COMMIT)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "floor.db"
        store = Store(f"sqlite:///{path}")
        store.upgrade()
        store.dispose()
        db = Database("sqlite", str(path), "NORMAL", 32 * 1024, store.sqlite_wal_max_bytes)
        conn: sqlite3.Connection = db._connect()
        started = time.perf_counter()
        for rows in commits:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(writer.spans_sql, rows)
            conn.execute("COMMIT")
        insert_s = time.perf_counter() - started
        conn.close()
    return Floor(spans / parse_s, spans / insert_s, spans / python_s)
