"""The PostgreSQL writer alone: what storing spans costs the writer and the server.

    python -m bench.pg_floor postgresql://127.0.0.1:5432/test [--requests 200] [--per-commit 8]

Decodes the benchmark's 512-span OTLP requests once (not timed), then writes them into
a fresh database through the writer's own code (storage/writer/commit.py), `--per-commit`
requests per transaction, as the writer process commits what waits. Reports spans/s
durable, the writer's CPU per span (this process) and the PostgreSQL backend's (read
from /proc: the server must run on this machine). Unlike the end-to-end rows, the CPU
figures hardly move with what else runs on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

import psycopg
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from bench import payloads
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.otlp.decode_traces import spans_from_proto
from storage.store import Store
from storage.wire.batch import encode_batch
from storage.writer.commit import BatchWriter

TICKS = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _wires(requests: int) -> list[tuple[object, ...]]:
    template = payloads.traces_proto(7)
    now = time.time_ns()
    processors = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics")]
    wires = []
    for n in range(requests):
        message = ExportTraceServiceRequest()
        message.ParseFromString(template.render(n, now + n * 10_000_000))
        batch = Batch(project_id=1, spans=spans_from_proto(message).spans)
        for processor in processors:
            batch = processor.process(batch)
        wires.append(tuple(encode_batch(batch)))
    return wires


def measure(admin: str, requests: int, per_commit: int) -> str:
    name = f"sounding_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"{admin.rsplit('/', 1)[0]}/{name}"
    try:
        store = Store(url.replace("postgresql://", "postgresql+psycopg://"))
        store.upgrade()
        store.dispose()
        with psycopg.connect(url) as conn:
            conn.execute("INSERT INTO projects (id, name, created_us) VALUES (1, 'bench', 0)")
            conn.commit()
            wires = _wires(requests)
            writer = BatchWriter("postgresql")
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
            conn.commit()
            wall, cpu, server = time.perf_counter(), time.process_time(), _cpu(backend)
            for start in range(0, requests, per_commit):
                with conn.cursor() as cursor:
                    writer.write(cursor, wires[start:start + per_commit],
                                 int(time.time() * 1_000_000))
                conn.commit()
                writer.committed()
            wall = time.perf_counter() - wall
            cpu, server = time.process_time() - cpu, _cpu(backend) - server
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    spans = requests * payloads.SPANS_PER_REQUEST
    return (f"{spans / wall:,.0f} spans/s durable, writer CPU {cpu / spans * 1e6:.1f} µs/span, "
            f"PostgreSQL backend CPU {server / spans * 1e6:.1f} µs/span, "
            f"{per_commit * payloads.SPANS_PER_REQUEST:,} spans per commit")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pg_floor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("postgres", help="an admin URL, e.g. postgresql://127.0.0.1:5432/test")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--per-commit", type=int, default=8)
    args = parser.parse_args(argv)
    print(measure(args.postgres.replace("postgresql+psycopg://", "postgresql://"),
                  args.requests, args.per_commit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
