"""CPU per span of each stage a protobuf span goes through in the collector's process,
on the 512-span payload of `traces_proto` (bench/payloads.py; four seeds in turn).

`python -m bench.span_stages [BATCHES]` decodes BATCHES requests (default 80) one by
one and runs each through scrub (default rules), classify, spanmetrics (the request
rollups and the operation fold) and the SQL exporter's wire encoding, timing each
stage; it prints the minimum over the batches of each stage's µs per span. Run it on
two trees alternately (`cd TREE && python -m bench.span_stages`) and compare minima:
the stages' shares of the whole are what the end-to-end door (`python -m bench --only
traces_proto`) cannot tell apart from its noise. The stages run in the order of the
default pipeline, each on what the one before left, since what a stage reads of a span
(and whether it stays unread in its message) depends on them.

On a noisy machine count instructions instead: `python -m bench.span_stages wire` (a
decode worker's part of 3 requests: decode, the stages, the wire form pickled) or
`... writer` (the writer process's part of 32 requests, 8 per commit, on a fresh SQLite
file: unpickling and BatchWriter.write, the fsync left out) runs once inside
sys.call_tracing, which callgrind can collect alone:
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=sys_call_tracing \
        --callgrind-out-file=/dev/null python -m bench.span_stages writer
prints the instructions ("Collected"); divide by the spans it prints.
"""

from __future__ import annotations

import sys
import tempfile
import time
from typing import Any

from bench import payloads
from bench.logs_cost import PER_COMMIT, Writing
from model.policy import Policy
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.scrub import ScrubProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.otlp.decode_traces import decode_traces_body
from storage.wire.batch import encode

STAGES = ("decode", "scrub", "classify", "spanmetrics", "encode")


def main(batches: int = 80) -> dict[str, float]:
    bodies = [payloads.traces_proto(seed).render(0, payloads.BASE_NS) for seed in range(4)]
    policy = Policy(hash_key=b"k" * 32)
    processors = [ScrubProcessor("scrub"), ClassifyProcessor("classify"),
                  SpanMetricsProcessor("spanmetrics")]
    best = dict.fromkeys(STAGES, float("inf"))
    clock = time.process_time
    for i in range(batches):
        started = clock()
        batch = Batch(1, spans=decode_traces_body(bodies[i % len(bodies)], True).spans,
                      policy=policy)
        times = [clock()]
        for processor in processors:
            batch = processor.process(batch)
            times.append(clock())
        encode(batch)
        times.append(clock())
        spans = len(batch.spans)
        for stage, before, after in zip(STAGES, [started, *times[:-1]], times, strict=True):
            best[stage] = min(best[stage], (after - before) / spans * 1e6)
    print(" ".join(f"{stage} {best[stage]:.2f}" for stage in STAGES), "us/span")
    return best


PIPELINE = [ScrubProcessor("scrub"), ClassifyProcessor("classify"),
            SpanMetricsProcessor("spanmetrics")]


def worker(body: bytes) -> Any:
    """What a decode worker does with one request: decode, stages, the wire form."""
    batch = Batch(1, spans=decode_traces_body(body, True).spans,
                  policy=Policy(hash_key=b"k" * 32))
    for processor in PIPELINE:
        batch = processor.process(batch)
    return encode(batch)


def counted(part: str) -> None:
    """One run of `part` inside sys.call_tracing (for callgrind)."""
    template = payloads.traces_proto(0)
    if part == "wire":
        bodies = [template.render(n, payloads.BASE_NS + n * 10**9) for n in range(1, 5)]
        worker(bodies[0])  # imports and caches warmed
        sys.call_tracing(lambda: [worker(b) for b in bodies[1:]], ())
        print(f"spans: {3 * template.spans}")
        return
    with tempfile.TemporaryDirectory() as folder:
        writing = Writing(folder, template, worker)
        writing.write(writing.payloads(PER_COMMIT))
        batch = writing.payloads(4 * PER_COMMIT)
        sys.call_tracing(writing.write, (batch,))
        print(f"spans: {4 * PER_COMMIT * template.spans}")
        writing.conn.close()


if __name__ == "__main__":
    if sys.argv[1:2] in (["wire"], ["writer"]):
        counted(sys.argv[1])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 80)
