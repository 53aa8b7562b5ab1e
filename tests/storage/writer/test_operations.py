"""The operation and edge rollups and the peer aliases, written by one writer over
several commits (as the writer process keeps its BatchWriter), read back by the
service map and operations queries, on both stores."""

from __future__ import annotations

import time

import pytest

from model.records import Batch, Span
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor
from storage.queries import operations as oq
from storage.store import Store
from storage.wire.batch import encode_batch
from storage.writer.commit import BatchWriter
from storage.writer.peers import Recent

NOW_S = int(time.time()) // 60 * 60
FRONT, BACK = {"service.name": "front"}, {"service.name": "back"}


def _span(trace: str, span_id: str, parent: str, name: str, kind: int,
          resource: dict[str, str], attributes: dict[str, object], ms: float = 5.0,
          error: bool = False) -> Span:
    start = NOW_S * 10**9 + 1_000_000
    return Span(trace, span_id, parent, name, kind, start, start + int(ms * 1_000_000),
                2 if error else 0, "", resource["service.name"], "", resource, attributes)


def _request(n: int) -> tuple[Batch, Batch]:
    """One request: front's server span, its call to back and two queries; and back's
    server span, each service's spans in a batch of their own."""
    trace = f"{n:032x}"
    front = Batch(1, spans=[
        _span(trace, f"{n:08x}00000001", "", "GET /a", 2, FRONT,
              {"http.request.method": "GET", "http.route": "/a"}),
        _span(trace, f"{n:08x}00000002", f"{n:08x}00000001", "GET", 3, FRONT,
              {"http.method": "GET", "http.url": f"http://127.0.0.1:5001/b/{n}"}, ms=20),
        *(_span(trace, f"{n:08x}0000001{i}", f"{n:08x}00000001", "SELECT", 3, FRONT,
                {"db.system": "postgresql", "db.name": "shop", "server.address": "db",
                 "server.port": 5432,
                 "db.statement": f"SELECT * FROM t WHERE id IN ({i}, {n}) AND x = 'y'"},
                ms=2, error=i == 1) for i in range(2)),
    ])
    back = Batch(1, spans=[_span(trace, f"{n:08x}00000003", f"{n:08x}00000002", "GET /b", 2,
                                 BACK, {"http.request.method": "GET", "http.route": "/b"})])
    for batch in (front, back):
        ClassifyProcessor("classify").process(batch)
        SpanMetricsProcessor("spanmetrics").process(batch)
    return front, back


def _commit(store: Store, writer: BatchWriter, batches: list[Batch]) -> None:
    with store.writer.begin() as conn:
        cursor = conn.connection.cursor()
        writer.write(cursor, [encode_batch(b) for b in batches], NOW_S * 1_000_000)
        cursor.close()
    writer.committed()


@pytest.mark.parametrize("callee_first", [False, True])
def test_calls_pair_across_commits_and_count_once(db_url: str, callee_first: bool) -> None:
    store = Store(db_url)
    writer = BatchWriter(store.dialect)
    for n in range(1, 4):
        front, back = _request(n)
        for batch in ((back, front) if callee_first else (front, back)):
            _commit(store, writer, [batch])
    found = oq.service_map(store, 1, NOW_S - 3600, NOW_S + 3600)
    by_id = {node.id: node for node in found.nodes}
    assert set(by_id) == {"service:front", "service:back", "database:postgresql db:5432/shop"}
    assert by_id["service:back"].stats is not None and by_id["service:back"].stats.count == 3
    edges = {(e.source, e.target): e for e in found.edges}
    assert set(edges) == {("service:front", "service:back"),
                          ("service:front", "database:postgresql db:5432/shop")}
    call = edges[("service:front", "service:back")]
    assert (call.stats.count, call.stats.error_count) == (3, 0)
    assert call.peers == [("http", "127.0.0.1:5001")]
    assert call.stats.p50_ms == pytest.approx(20, rel=oq.ACCURACY)
    db = edges[("service:front", "database:postgresql db:5432/shop")].stats
    assert (db.count, db.error_count) == (6, 3)
    ops = oq.operations(store, 1, NOW_S - 3600, NOW_S + 3600, "front", sort="failing")
    assert [(o.kind, o.peer, o.name, o.stats.count, o.stats.error_count) for o in ops] == [
        ("database", "postgresql db:5432/shop", "SELECT * FROM t WHERE id IN (?) AND x = ?",
         6, 3),
        ("client", "127.0.0.1:5001", "GET", 3, 0),
        ("http", "", "GET /a", 3, 0),
    ]
    # The hourly rollups hold the same counts (a long range reads them).
    week = oq.service_map(store, 1, NOW_S - 7 * 86400, NOW_S + 3600)
    assert sorted((e.target, e.stats.count) for e in week.edges) == [
        ("database:postgresql db:5432/shop", 6), ("service:back", 3)]
    store.close()


def test_a_call_whose_child_is_never_seen_is_an_edge_to_its_peer(db_url: str) -> None:
    store = Store(db_url)
    writer = BatchWriter(store.dialect)
    front, _back = _request(1)
    _commit(store, writer, [front])
    found = oq.service_map(store, 1, NOW_S - 3600, NOW_S + 3600)
    assert {(e.source, e.target) for e in found.edges} == {
        ("service:front", "http:127.0.0.1:5001"),
        ("service:front", "database:postgresql db:5432/shop")}
    store.close()


def test_the_halves_kept_are_bounded() -> None:
    recent = Recent(size=3)
    for i in range(10):
        recent.put(i, str(i))
    assert len(recent) <= 6
    assert recent.pop(9) == "9" and recent.pop(0) is None  # the newest kept, the oldest gone
