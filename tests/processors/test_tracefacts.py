"""processors/tracefacts.py: which spans of a batch the spanmetrics processor notes
for the performance detectors, under the project's thresholds."""

from __future__ import annotations

from model.detectors import DATABASE, HTTP, ROOT, detector_settings
from model.policy import Policy
from model.records import Batch, Span
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor

TRACE = "1" * 32
ROOT_ID = "a" * 16
RESOURCE = {"service.name": "shop", "service.version": "2.0",
            "deployment.environment.name": "prod"}
DB = {"db.system": "sqlite", "db.name": "shop.db"}


def _span(span_id: str, parent: str, name: str, kind: int, attributes: dict[str, object],
          start_ms: float, ms: float) -> Span:
    start = 1_700_000_000 * 10**9 + int(start_ms * 1_000_000)
    return Span(TRACE, span_id, parent, name, kind, start, start + int(ms * 1_000_000), 0,
                "", "shop", "", RESOURCE, attributes)


def _query(i: int, statement: str, ms: float = 2.0, parent: str = ROOT_ID) -> Span:
    return _span(f"{i:016x}", parent, "SELECT", 3, {**DB, "db.statement": statement},
                 10 + 10 * i, ms)


def _facts(spans: list[Span], detectors: dict[str, object] | None = None
           ) -> list[tuple[object, ...]]:
    batch = Batch(1, spans=spans, policy=Policy(detectors=detector_settings(detectors)))
    ClassifyProcessor("classify").process(batch)
    SpanMetricsProcessor("spanmetrics").process(batch)
    return batch.trace_facts


SERVER = _span(ROOT_ID, "", "GET /orders/<id>", 2,
               {"http.request.method": "GET", "http.route": "/orders/<id>"}, 0, 100)


def test_a_route_and_every_database_call_are_noted_lone_or_repeated() -> None:
    facts = _facts([SERVER, *(_query(i, f"SELECT item FROM lines WHERE id = {i}")
                              for i in range(3)),
                    _query(7, "SELECT name FROM users WHERE id = 1")])
    roots = [f for f in facts if f[3] == ROOT]
    assert roots == [(TRACE, ROOT_ID, "", ROOT, "shop", "GET /orders/<id>", SERVER.start_ns,
                      SERVER.end_ns, "2.0", "prod")]
    calls = [f for f in facts if f[3] == DATABASE]
    assert [f[5] for f in calls] == ["SELECT item FROM lines WHERE id = ?"] * 3 + [
        "SELECT name FROM users WHERE id = ?"]


def test_a_span_alone_in_its_batch_is_noted_as_in_a_batch_with_its_trace() -> None:
    # One span per request (OpenTelemetry's SimpleSpanProcessor): whether its statement
    # repeats is the writer's to find, over the trace (tests/storage/writer/test_detect.py).
    spans = [*(_query(i, "SELECT 1", parent=f"{i % 2:016x}") for i in range(4)), SERVER]
    alone = [fact for span in spans for fact in _facts([span])]
    assert sorted(alone) == sorted(_facts(spans))
    assert len(alone) == 5


def test_without_the_n_plus_one_detector_only_slow_queries_are_noted() -> None:
    fast, slow = _query(1, "SELECT 1"), _query(2, "SELECT 2", ms=600)
    off = {"n_plus_one": {"enabled": False}}
    assert [f[1] for f in _facts([SERVER, fast, slow], off) if f[3] == DATABASE] == [
        slow.span_id]


def test_a_lone_slow_select_is_noted_for_the_slow_query_detector() -> None:
    slow = _query(1, "SELECT * FROM big", ms=600)
    assert [f[1] for f in _facts([SERVER, slow]) if f[3] == DATABASE] == [slow.span_id]
    off = {"slow_query": {"enabled": False}, "n_plus_one": {"enabled": False}}
    assert [f for f in _facts([SERVER, slow], off) if f[3] == DATABASE] == []


def test_only_http_calls_long_enough_to_matter_are_noted() -> None:
    def call(i: int, ms: float) -> Span:
        return _span(f"{i:016x}", ROOT_ID, "GET", 3, {
            "http.request.method": "GET", "server.address": "prices", "server.port": 80,
            "url.full": "http://prices/p"}, 10 + 700 * i, ms)
    facts = _facts([SERVER, call(1, 600), call(2, 100)])
    assert [(f[1], f[5]) for f in facts if f[3] == HTTP] == [(call(1, 0).span_id,
                                                              "GET prices:80")]


def test_nothing_is_noted_when_every_detector_is_off() -> None:
    off = {name: {"enabled": False} for name in ("n_plus_one", "slow_query",
                                                  "consecutive_http")}
    assert _facts([SERVER, *(_query(i, "SELECT 1") for i in range(5))], off) == []
