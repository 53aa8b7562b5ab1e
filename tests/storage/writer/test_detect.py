"""storage/writer/detect.py: the writer gathers a trace's facts over several commits,
examines the trace once complete (or early, past its bounds), and stores a finding as
one occurrence of a `performance` group however often the trace is examined; on
both stores. The join: a trace's spans noted by the real processors and encoded as
the wire sends them, one span per batch or all in one, find the same problems."""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import text

from model.detectors import DATABASE, ROOT, DetectorSettings, Fact, Finding
from model.policy import Policy
from model.records import Batch, Span
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor
from storage import rows
from storage.store import Store
from storage.wire.batch import encode_batch
from storage.writer.commit import BatchWriter
from storage.writer.detect import FindingsWriter, TraceWatch, findings_batches, findings_of

MS = 1_000_000
START = int(time.time()) * 10**9


def _wire(facts: list[tuple[Any, ...]]) -> rows.WireBatch:
    """A wire batch of facts, with the default settings (as storage/wire/batch.py
    sends them)."""
    lists: dict[str, list[Any]] = {name: [] for name in rows.WireBatch._fields[1:]}
    lists["trace_facts"] = facts
    lists["detectors"] = [(json.dumps(DetectorSettings().as_row()),)]
    return rows.WireBatch(1, **lists)


def _root(trace: str) -> tuple[Any, ...]:
    return (trace, "r" * 16, "", ROOT, "shop", "GET /orders", START, START + 500 * MS,
            "1.0", "prod")


def _queries(trace: str, n: int, ms: float = 12) -> list[tuple[Any, ...]]:
    return [(trace, f"{i:016x}", "r" * 16, DATABASE, "shop", "SELECT 1", START + i * 20 * MS,
             START + i * 20 * MS + int(ms * MS), "", "") for i in range(n)]


def test_a_trace_is_examined_once_its_last_fact_is_wait_s_old() -> None:
    watch = TraceWatch(wait_s=10)
    trace = "1" * 32
    watch.note([_wire(_queries(trace, 3))])
    watch.committed(100.0)
    watch.note([_wire([_root(trace), *_queries(trace, 5)[3:]])])
    watch.committed(105.0)  # a late part: the trace waits from here
    assert watch.seconds_to_next(106.0) == 9.0
    assert watch.complete(114.0) == []
    [(project, facts, _settings)] = watch.complete(115.0)
    assert project == 1 and len(facts) == 6 and len(watch) == 0
    [(_trace, finding)] = findings_of([(project, facts, _settings)])[1]
    assert (finding.title, finding.transaction, len(finding.span_ids)) == (
        "N+1 query", "GET /orders", 5)


def _span(trace: str, i: int, parent: str, kind: int, attributes: dict[str, object],
          start_ms: float, ms: float) -> Span:
    start = START + int(start_ms * MS)
    return Span(trace, f"{i:016x}", parent, "GET /items" if kind == 2 else "SELECT", kind,
                start, start + int(ms * MS), 0, "", "shop", "",
                {"service.name": "shop", "service.version": "3.1"}, attributes)


def _request(trace: str) -> list[Span]:
    """GET /items with 10 sequential SELECTs of one statement (80 ms in all), in the
    order an SDK ends them: the calls, then the route."""
    root = f"{99:016x}"
    calls = [_span(trace, i, root, 3, {"db.system": "sqlite",
                                       "db.statement": f"SELECT * FROM items WHERE id = {i}"},
                   1 + 9 * i, 8) for i in range(10)]
    return [*calls, _span(trace, 99, "", 2, {"http.request.method": "GET",
                                             "http.route": "/items"}, 0, 95)]


def _wires(batches: list[list[Span]]) -> list[rows.WireBatch]:
    """Each list of spans as one batch through classify and spanmetrics, encoded."""
    out = []
    for spans in batches:
        batch = Batch(1, spans=spans, policy=Policy())
        ClassifyProcessor("classify").process(batch)
        SpanMetricsProcessor("spanmetrics").process(batch)
        out.append(encode_batch(batch))
    return out


def _found(wires: list[rows.WireBatch], watch: TraceWatch | None = None,
           ) -> list[tuple[str, Finding]]:
    watch = watch or TraceWatch(wait_s=10)
    for n, wire in enumerate(wires):  # each batch in its own commit
        watch.note([wire])
        watch.committed(100.0 + n * 0.01)
    return [f for found in findings_of(watch.complete(200.0)).values() for f in found]


def test_a_trace_one_span_per_batch_finds_what_it_finds_in_one_batch() -> None:
    trace = "4" * 32
    spans = _request(trace)
    together = _found(_wires([spans]))
    alone = _found(_wires([[span] for span in spans]))
    assert alone == together
    [(found_in, finding)] = alone
    assert found_in == trace
    assert (finding.title, finding.transaction, finding.subject, finding.release) == (
        "N+1 query", "GET /items", "SELECT * FROM items WHERE id = ?", "3.1")
    assert len(finding.span_ids) == 10 and round(finding.total_ms) == 80


def test_the_root_in_a_later_batch_than_its_calls_names_the_issue() -> None:
    spans = _request("5" * 32)
    # The calls split unevenly over three batches, the route alone after them.
    [(_, finding)] = _found(_wires([spans[:3], spans[3:4], spans[4:10], spans[10:]]))
    assert finding.transaction == "GET /items" and len(finding.span_ids) == 10
    assert finding.fingerprint == _found(_wires([spans]))[0][1].fingerprint


def test_three_traces_of_one_n_plus_one_are_one_group() -> None:
    found = _found(_wires([[span] for n in range(3) for span in _request(f"{n + 6:032x}")]))
    assert len(found) == 3 and len({f.fingerprint for _, f in found}) == 1


def test_past_its_bound_of_facts_the_oldest_trace_is_examined_early() -> None:
    # Every database call is held (one span per batch leaves no other way to join
    # them): past `max_held` facts in all, the oldest trace goes, whatever the time.
    watch = TraceWatch(wait_s=60, max_held=25)
    for n in range(3):
        for wire in _wires([[span] for span in _request(f"{n + 10:032x}")]):
            watch.note([wire])
            watch.committed(float(n))
    assert watch.held == 33 and watch.seconds_to_next(3.0) == 0.0
    [(_, facts, _settings)] = watch.complete(3.0)
    assert facts[0].trace_id == f"{10:032x}" and len(facts) == 11
    assert watch.held == 22 and len(watch) == 2 and watch.seconds_to_next(3.0) == 58.0


def test_a_trace_holds_at_most_max_facts_and_counts_the_rest() -> None:
    watch = TraceWatch(wait_s=0, max_facts=4)
    trace = "8" * 32
    watch.note([_wire(_queries(trace, 6))])
    watch.committed(1.0)
    assert watch.held == 4 and watch.facts_left_out == 2
    [(_, facts, _settings)] = watch.complete(2.0)
    assert len(facts) == 4 and watch.held == 0


def test_past_its_bound_the_oldest_trace_is_examined_early() -> None:
    watch = TraceWatch(wait_s=60, max_traces=2)
    for n in range(3):
        trace = f"{n:032x}"
        watch.note([_wire([_root(trace)])])
        watch.committed(float(n))
    assert watch.seconds_to_next(3.0) == 0.0
    assert [facts[0][0] for _, facts, _ in watch.complete(3.0)] == [f"{0:032x}"]
    assert len(watch) == 2


def test_a_rolled_back_commit_adds_no_fact() -> None:
    watch = TraceWatch(wait_s=0)
    watch.note([_wire(_queries("2" * 32, 5))])
    watch.note([])  # the writer's next attempt, after the rollback
    watch.committed(1.0)
    assert len(watch) == 0


def test_a_finding_is_one_occurrence_of_a_performance_group(db_url: str) -> None:
    store = Store(db_url)
    writer = BatchWriter(store.dialect)
    trace = "3" * 32
    facts = [Fact(*f) for f in (_root(trace), *_queries(trace, 5))]
    found = findings_of([(1, facts, DetectorSettings())])
    for _ in range(2):  # the same trace's finding written twice stays one occurrence
        with store.writer.begin() as conn:
            cursor = conn.connection.cursor()
            FindingsWriter(writer).write(cursor, findings_batches(found), START // 1000)
            cursor.close()
    with store.reader.connect() as conn:
        groups = conn.execute(text("SELECT issue_type, exception_class, message, count, "
                                   "status FROM error_groups")).all()
        events = conn.execute(text("SELECT trace_id, span_id, release FROM error_events")).all()
    assert [tuple(g) for g in groups] == [("performance", "N+1 query", "SELECT 1", 1, "open")]
    assert [tuple(e) for e in events] == [(trace, "r" * 16, "1.0")]
