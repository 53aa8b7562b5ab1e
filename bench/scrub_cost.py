"""CPU per record of scrubbing and the inbound filters (issue 24), at every door's shape.

`python -m bench.scrub_cost` decodes each door's bench payload (bench/payloads*.py,
bench/sentry_event_10k.envelope: the shapes bench/doors.py sends) with the real
decoders, then times on this tree, as the minimum of several runs of CPU time in
microseconds per record:

- `scrub`: the scrub stage alone with the default rules (processors/scrub/);
- `scrub+`: with every rule on (e-mails, IP addresses, two custom rules, one hashing);
- `filters`: the filters stage with every filter on (processors/filters.py), errors only;
- `off` and `on`: decoding + every stage + the SQL exporter's wire encoding, without and
  with `filters` and `scrub`, so that their share of a record's whole cost shows (in
  `instructions`, decoding is taken out of these too).

The payloads hold no secret, as most traffic: the stages' cost is then what checking
costs. Decoding is done before each timed run of a stage alone (it changes records).

On a shared machine CPU time moves with the other tenants; `python -m bench.scrub_cost
instructions` counts instead, with callgrind, the instructions per record that each
stage adds: each door's batches decoded alone, then decoded and run through `scrub`
(default rules) or `filters` (every filter on), or through the whole pipeline without
and with both, each in a process of its own; the difference per record is the stage's.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any

from bench import callgrind, payloads, payloads_metrics
from bench.decode_cost import per_record
from bench.sentry_cost import ENVELOPE, NOW_US
from model.component import Processor
from model.policy import Policy, filter_settings, scrub_settings
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.exceptions import ExceptionsProcessor
from processors.filters import FiltersProcessor
from processors.grouping import GroupingProcessor
from processors.logexceptions import LogExceptionsProcessor
from processors.reopen import ReopenProcessor
from processors.scrub import ScrubProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.custom.decode import decode_error, decode_error_batch
from receiver.jsonbody import parse_json
from receiver.otlp.decode_logs import decode_logs_body
from receiver.otlp.decode_metrics import decode_metrics_body
from receiver.otlp.decode_traces import decode_traces_body
from receiver.sentry.items import decode_envelope_body
from storage.wire.batch import encode

NOW_NS = payloads.BASE_NS
DEFAULT = Policy(hash_key=b"k" * 32)
EVERYTHING = Policy(
    scrub_settings({"emails": True, "ip_addresses": True, "rules": [
        {"keys": ["user.id", "enduser.id"], "action": "hash"},
        {"pattern": r"ORD-\d{4,}", "action": "mask"}]}),
    filter_settings({"localhost": True, "browser_extensions": True, "legacy_browsers": True,
                     "web_crawlers": True, "error_messages": ["Flaky*", "*hang up"],
                     "releases": ["*-dev"], "ip_ranges": ["10.0.0.0/8", "2001:db8::/32"]}),
    b"k" * 32)
BASE = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics"),
        ExceptionsProcessor("exceptions"), LogExceptionsProcessor("logexceptions"),
        GroupingProcessor("grouping"), ReopenProcessor("reopen")]
SCRUB, FILTERS = ScrubProcessor("scrub"), FiltersProcessor("filters")


def doors() -> list[tuple[str, Callable[[], Batch], int]]:
    """(door, a fresh batch decoded from its payload, records in it)."""
    traces = payloads.traces_proto(0).render(0, NOW_NS)
    logs = payloads.logs_proto(0).render(0, NOW_NS)
    metrics = payloads_metrics.metrics_proto(0).render(0, NOW_NS)
    errors, single = payloads.errors_batch(0), payloads.error_single(0)
    envelope = ENVELOPE.read_bytes()
    n_metrics = len(decode_metrics_body(metrics, True).metrics)
    return [
        ("traces_proto", lambda: Batch(1, client_ip="10.1.2.3",
                                       spans=decode_traces_body(traces, True).spans), 512),
        ("logs_proto", lambda: Batch(1, logs=decode_logs_body(logs, True, NOW_NS).logs), 512),
        ("metrics_proto", lambda: Batch(1, metrics=decode_metrics_body(metrics, True).metrics),
         n_metrics),
        ("errors_batch", lambda: Batch(1, client_ip="10.1.2.3", errors=decode_error_batch(
            parse_json(errors), 0, None)[0]), 100),
        ("errors_single", lambda: Batch(1, client_ip="10.1.2.3", errors=[
            decode_error(parse_json(single), 0, None)]), 1),
        ("sentry_event", lambda: Batch(1, client_ip="10.1.2.3", errors=decode_envelope_body(
            envelope, NOW_US).errors), 1),
    ]


def stage_alone(make: Callable[[], Batch], stage: Processor, policy: Policy, records: int,
                repeats: int, copies: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        batches = [make() for _ in range(copies)]
        for batch in batches:
            batch.policy = policy
        started = time.process_time()
        for batch in batches:
            stage.process(batch)
        best = min(best, (time.process_time() - started) / copies)
    return best / records * 1e6


def many(make: Callable[[], Batch], stages: list[Processor], copies: int) -> list[Any]:
    return [whole(make, stages, DEFAULT) for _ in range(copies)]


def whole(make: Callable[[], Batch], stages: list[Processor], policy: Policy) -> Any:
    batch = make()
    batch.policy = policy
    for stage in stages:
        batch = stage.process(batch)
    return encode(batch)


MODES = ("decode", "scrub", "filters", "off", "on")


def run_mode(door: str, mode: str, copies: int) -> None:
    """Decode `copies` batches of `door` and run `mode` on them (counted by callgrind)."""
    make = dict((name, make) for name, make, _ in doors())[door]
    batches = [make() for _ in range(copies)]
    for batch in batches:
        batch.policy = EVERYTHING if mode == "filters" else DEFAULT
        by_mode: dict[str, list[Processor]] = {
            "decode": [], "scrub": [SCRUB], "filters": [FILTERS], "off": BASE,
            "on": [FILTERS, SCRUB, *BASE]}
        stages = by_mode[mode]
        for stage in stages:
            batch = stage.process(batch)
        if mode in ("off", "on"):
            encode(batch)


def instructions(door: str, mode: str, copies: int) -> int:
    return callgrind.instructions("bench.scrub_cost", "run", door, mode, str(copies))


def count_instructions(copies: int = 3) -> None:
    print(f"{'door':15s} {'scrub':>9s} {'filters':>9s} {'off':>9s} {'on':>9s}"
          "   instructions/record (callgrind)")
    for name, _make, records in doors():
        n = max(1, 1024 // records) if records > 1 else 50
        counts = {mode: instructions(name, mode, n) for mode in MODES}
        per = {m: (counts[m] - counts["decode"]) / (records * n) for m in MODES}
        filters = f"{per['filters']:9.0f}" if name.startswith(("errors", "sentry")) \
            else f"{'-':>9s}"
        print(f"{name:15s} {per['scrub']:9.0f} {filters} {per['off']:9.0f} {per['on']:9.0f}",
              flush=True)


def main(repeats: int = 7) -> None:
    print(f"{'door':15s} {'scrub':>8s} {'scrub+':>8s} {'filters':>8s} {'off':>8s} {'on':>8s}"
          "   us/record")
    for name, make, records in doors():
        copies = max(1, 400 // records)
        scrub = stage_alone(make, SCRUB, DEFAULT, records, repeats, copies)
        everything = stage_alone(make, SCRUB, EVERYTHING, records, repeats, copies)
        filters = stage_alone(make, FILTERS, EVERYTHING, records, repeats, copies) \
            if name.startswith(("errors", "sentry")) else float("nan")
        off = per_record(functools.partial(many, make, BASE, copies), records * copies,
                         repeats)
        on = per_record(functools.partial(many, make, [FILTERS, SCRUB, *BASE], copies),
                        records * copies, repeats)
        print(f"{name:15s} {scrub:8.2f} {everything:8.2f} {filters:8.2f} {off:8.2f} {on:8.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run_mode(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1:2] == ["instructions"]:
        count_instructions()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
