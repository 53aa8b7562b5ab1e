"""What the performance detectors add to a span (issue 27), in both processes.

`python -m bench detectors` decodes the traces door's bench payload (bench/payloads.py:
512 spans a request, a server span and its database, messaging and internal children)
and measures, per span, as the minimum of several runs of CPU time:

- `off`: classify and spanmetrics (with the operation and edge rollups) and the wire
  encoding, with every detector turned off (no facts noted);
- `on`: the same with the detectors on (the default): each database call, HTTP call
  and local root noted as a fact and encoded for the writer;
- `writer`: the writer's part for those batches: their facts gathered per trace
  (storage/writer/detect.py's TraceWatch), each trace taken once complete and the
  detectors run over it (model/detectors.py).

`on - off + writer` is what the detectors add to a span. `python -m bench detectors
instructions` counts the same with callgrind (instructions per span), which the
other tenants of a shared machine do not move.
"""

from __future__ import annotations

import pickle
import sys
from typing import Any

from bench import callgrind, payloads
from bench.decode_cost import per_record
from model.detectors import detector_settings
from model.policy import Policy
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.otlp.decode_traces import decode_traces_body
from storage.rows import WireBatch
from storage.wire.batch import encode
from storage.writer.detect import TraceWatch, findings_of

SPANS = 512
ON = Policy(hash_key=b"k" * 32)
OFF = Policy(hash_key=b"k" * 32, detectors=detector_settings({
    "n_plus_one": {"enabled": False}, "slow_query": {"enabled": False},
    "consecutive_http": {"enabled": False}}))
STAGES = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics")]


def _bodies(copies: int) -> list[bytes]:
    # Each copy its own traces: a trace gathers the facts of one request only.
    return [payloads.traces_proto(i).render(i, payloads.BASE_NS) for i in range(copies)]


def _batches(bodies: list[bytes], policy: Policy) -> list[Batch]:
    return [Batch(1, spans=decode_traces_body(body, True).spans, policy=policy)
            for body in bodies]


def _processed(batches: list[Batch]) -> list[Any]:
    out = []
    for batch in batches:
        for stage in STAGES:
            batch = stage.process(batch)
        out.append(encode(batch))
    return out


def _unpickled(encoded: list[Any]) -> list[WireBatch]:
    """The batches as the writer process takes them (it unpickles every batch, with or
    without facts)."""
    return [WireBatch._make(pickle.loads(wire.payload)) for wire in encoded]


def _writer(wires: list[WireBatch]) -> int:
    watch = TraceWatch(wait_s=0.0, max_traces=1 << 30)
    for wire in wires:
        watch.note([wire])
        watch.committed(0.0)
    return sum(len(found) for found in findings_of(watch.complete(1.0)).values())


def run_mode(mode: str, copies: int) -> None:
    """Decode `copies` batches and run `mode` on them (counted by callgrind)."""
    bodies = _bodies(copies)
    if mode == "decode":
        _batches(bodies, ON)
    elif mode in ("off", "on"):
        _processed(_batches(bodies, ON if mode == "on" else OFF))
    elif mode == "unpickled":
        _unpickled(_processed(_batches(bodies, ON)))
    else:  # "writer": the whole `on`, unpickled, then the writer's part
        _writer(_unpickled(_processed(_batches(bodies, ON))))


def _instructions(mode: str, copies: int) -> int:
    return callgrind.instructions("bench.detect_cost", "run", mode, str(copies))


def count_instructions(copies: int = 4) -> None:
    counts = {mode: _instructions(mode, copies)
              for mode in ("decode", "off", "on", "unpickled", "writer")}
    per = {m: (counts[m] - counts["decode"]) / (SPANS * copies) for m in counts}
    print(f"instructions per span (callgrind, {copies} batches of {SPANS}):")
    print(f"  stages + encoding, detectors off: {per['off']:8.0f}")
    print(f"  stages + encoding, detectors on:  {per['on']:8.0f}  "
          f"(+{per['on'] - per['off']:.0f})")
    print(f"  the writer's part:                {per['writer'] - per['unpickled']:8.0f}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["run"]:
        run_mode(argv[1], int(argv[2]))
        return 0
    if argv[:1] == ["instructions"]:
        count_instructions()
        return 0
    repeats, copies = 7, 8
    bodies = _bodies(copies)
    off = per_record(lambda: _processed(_batches(bodies, OFF)), SPANS * copies, repeats)
    on = per_record(lambda: _processed(_batches(bodies, ON)), SPANS * copies, repeats)
    decode = per_record(lambda: _batches(bodies, ON), SPANS * copies, repeats)
    wires = _unpickled(_processed(_batches(bodies, ON)))
    writer = per_record(lambda: _writer(wires), SPANS * copies, repeats)
    print(f"us per span (min of {repeats}, {copies} batches of {SPANS} spans; decoding "
          f"{decode:.2f} us taken out):")
    print(f"  stages + encoding, detectors off: {off - decode:6.2f}")
    print(f"  stages + encoding, detectors on:  {on - decode:6.2f}  (+{on - off:.2f})")
    print(f"  the writer's part:                {writer:6.2f}")
    print(f"  findings in these traces: {_writer(wires)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
