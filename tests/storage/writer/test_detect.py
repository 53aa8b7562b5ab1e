"""storage/writer/detect.py: the writer gathers a trace's facts over several commits,
examines the trace once complete (or early, past its bound), and stores a finding as
one occurrence of a `performance` group however often the trace is examined; on
both stores."""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import text

from model.detectors import DATABASE, ROOT, DetectorSettings, Fact
from storage import rows
from storage.store import Store
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
