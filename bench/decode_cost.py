"""CPU per record of the pure decode path, without HTTP or the store.

`python -m bench.decode_cost` times, on this tree, the decode functions alone and
decode + Sounding's processors + the wire encoding, for a 512-span protobuf body,
a 1 MB OTLP/JSON body, a 100-error batch and a single error: the minimum of
several runs of CPU time, in microseconds per record. Run it on two commits to
compare them; on a shared machine, compare minima of several runs (or count
instructions: `valgrind --tool=cachegrind` on this module is steady to 1%).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from bench import payloads
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.exceptions import ExceptionsProcessor
from processors.grouping import GroupingProcessor
from processors.reopen import ReopenProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.custom.decode import decode_error, decode_error_batch
from receiver.jsonbody import parse_json
from receiver.otlp.decode_traces import decode_traces_body
from storage.wire.batch import encode

PROCESSORS = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics"),
              ExceptionsProcessor("exceptions"), GroupingProcessor("grouping"),
              ReopenProcessor("reopen")]


def json_megabyte() -> tuple[bytes, int]:
    """About 1 MB of OTLP/JSON: several 512-span requests in one body."""
    doc: dict[str, list[Any]] = {"resourceSpans": []}
    for seed in range(8):
        doc["resourceSpans"] += json.loads(payloads.traces_json(seed).body)["resourceSpans"]
        if len(json.dumps(doc)) > 1_000_000:
            break
    spans = sum(len(s["spans"]) for r in doc["resourceSpans"] for s in r["scopeSpans"])
    return json.dumps(doc, separators=(",", ":")).encode(), spans


def pipeline(batch: Batch) -> Any:
    for processor in PROCESSORS:
        batch = processor.process(batch)
    return encode(batch)


def per_record(run: Callable[[], Any], records: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best / records * 1e6


def main(repeats: int = 9) -> None:
    proto = payloads.traces_proto(0).body
    big, big_spans = json_megabyte()
    errors, single = payloads.errors_batch(0), payloads.error_single(0)
    cases: list[tuple[str, Callable[[], Any], int]] = [
        ("protobuf 512 spans: decode", lambda: decode_traces_body(proto, True), 512),
        ("protobuf 512 spans: all", lambda: pipeline(
            Batch(1, spans=decode_traces_body(proto, True).spans)), 512),
        ("OTLP/JSON 1 MB: decode", lambda: decode_traces_body(big, False), big_spans),
        ("OTLP/JSON 1 MB: all", lambda: pipeline(
            Batch(1, spans=decode_traces_body(big, False).spans)), big_spans),
        ("100 errors: decode", lambda: decode_error_batch(parse_json(errors), 0, None), 100),
        ("100 errors: all", lambda: pipeline(
            Batch(1, errors=decode_error_batch(parse_json(errors), 0, None)[0])), 100),
        ("1 error: all", lambda: pipeline(
            Batch(1, errors=[decode_error(parse_json(single), 0, None)])), 1),
    ]
    for name, run, records in cases:
        print(f"{name:28s} {per_record(run, records, repeats):8.2f} us/record")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
