"""Metric points stored: series once, points once, cumulative values as deltas with
their state in the store, HTTP server durations into the metric request rollups."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import requests
import sqlalchemy as sa
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.metrics.v1 import metrics_pb2

from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    TEMPORALITY_CUMULATIVE,
    TEMPORALITY_DELTA,
    Batch,
    MetricPoint,
    RequestMetric,
)
from storage.queries import performance
from storage.store import Store
from storage.wire.batch import write_batches
from tests.support.server import Server

S = 1_000_000_000
T0 = 1_764_000_000 * S  # a minute's start
RESOURCE = {"service.name": "web", "deployment.environment.name": "prod"}


def point(kind: str = SUM, time_s: int = 60, start_s: int = 1, temporality: int =
          TEMPORALITY_CUMULATIVE, name: str = "requests", **values: Any) -> MetricPoint:
    return MetricPoint(name=name, unit=values.pop("unit", "1"), description="",
                       kind=kind, temporality=temporality,
                       monotonic=values.pop("monotonic", kind == SUM),
                       service_name="web", resource_attributes=RESOURCE, scope_name="s",
                       attributes=values.pop("attributes", {"route": "/a"}),
                       start_ns=T0 + start_s * S if start_s else 0,
                       time_ns=T0 + time_s * S, **values)


def duration(time_s: int, counts: list[int], total: float, status: int = 200,
             temporality: int = TEMPORALITY_CUMULATIVE, start_s: int = 1,
             **values: Any) -> MetricPoint:
    return point(HISTOGRAM, time_s, start_s, temporality, name="http.server.request.duration",
                 unit="s", count=sum(counts), sum=total, bounds=[0.01, 0.1, 1.0],
                 bucket_counts=counts,
                 attributes={"http.request.method": "GET", "http.route": "/a",
                             "http.response.status_code": status}, **values)


def write(store: Store, *points: MetricPoint, received_us: int = 1) -> None:
    with store.writer.begin() as conn:
        write_batches(conn, [Batch(1, metrics=list(points))], received_us)


def stored(store: Store, name: str = "requests") -> list[dict[str, Any]]:
    with store.reader.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT p.* FROM metric_points p JOIN metric_series s ON "
            "s.project_id = p.project_id AND s.series_key = p.series_key "
            "WHERE s.name = :name ORDER BY p.time_ns"), {"name": name}).mappings().all()
    return [dict(r) for r in rows]


def as_json(value: Any) -> Any:
    """A JSON column read back as text (SQLite) or parsed (PostgreSQL)."""
    return json.loads(value) if isinstance(value, str) else value


def values(store: Store) -> list[tuple[int, float]]:
    return [((r["time_ns"] - T0) // S, r["value"]) for r in stored(store)]


@pytest.fixture
def store(db_url: str) -> Any:
    store = Store(db_url)
    store.upgrade()
    yield store
    store.dispose()


def test_a_series_is_stored_once_with_what_it_is(store: Store) -> None:
    write(store, point(GAUGE, 60, 0, 0, name="temp", value=21.5, monotonic=False),
          point(GAUGE, 120, 0, 0, name="temp", value=22.0, monotonic=False))
    with store.reader.connect() as conn:
        series = conn.execute(sa.text("SELECT * FROM metric_series")).mappings().all()
        resources = conn.execute(sa.text("SELECT attributes FROM resources")).all()
    assert len(series) == 1
    assert (series[0]["name"], series[0]["kind"], series[0]["points"],
            series[0]["service_name"]) == ("temp", "gauge", "value", "web")
    assert as_json(series[0]["attributes"]) == {"route": "/a"}
    assert len(resources) == 1
    assert [(t, v) for t, v in values_of(store, "temp")] == [(60, 21.5), (120, 22.0)]


def values_of(store: Store, name: str) -> list[tuple[int, float]]:
    return [((r["time_ns"] - T0) // S, r["value"]) for r in stored(store, name)]


def test_cumulative_sums_become_deltas(store: Store) -> None:
    write(store, point(value=5), point(time_s=120, value=8))
    write(store, point(time_s=180, value=15))
    assert values(store) == [(60, 5.0), (120, 3.0), (180, 7.0)]
    # The delta's start is the previous point's time.
    assert [(r["start_ns"] - T0) // S for r in stored(store)] == [1, 60, 120]


def test_a_re_sent_or_older_point_is_counted_once(store: Store) -> None:
    write(store, point(value=5), point(time_s=120, value=8))
    write(store, point(time_s=120, value=8))  # re-sent
    write(store, point(time_s=90, value=6))  # late: the state covers it
    write(store, point(time_s=180, value=10))
    assert values(store) == [(60, 5.0), (120, 3.0), (180, 2.0)]


def test_a_reset_starts_again_from_the_whole_value(store: Store) -> None:
    write(store, point(value=5), point(time_s=120, value=8))
    write(store, point(time_s=180, start_s=150, value=2))  # restarted: new start time
    write(store, point(time_s=240, start_s=150, value=1))  # went down: a reset too
    assert values(store) == [(60, 5.0), (120, 3.0), (180, 2.0), (240, 1.0)]


def test_a_sum_without_a_finite_value_is_stored_as_null_and_counts_nothing(
        store: Store) -> None:
    # It made the writer's subtraction raise (None - float), failing the commit.
    write(store, point(value=5), point(time_s=120, value=float("nan")))
    write(store, point(time_s=180, value=float("inf")))
    write(store, point(time_s=240, value=9))
    assert values(store) == [(60, 5.0), (120, None), (180, None), (240, 4.0)]
    # The delta after them starts at the last point that had a value.
    assert (stored(store)[-1]["start_ns"] - T0) // S == 60


def test_several_points_of_a_series_in_one_commit_follow_one_another(store: Store) -> None:
    write(store, point(time_s=180, value=9), point(value=5), point(time_s=120, value=8))
    assert values(store) == [(60, 5.0), (120, 3.0), (180, 1.0)]


def test_many_points_of_one_commit_are_each_stored_once(store: Store) -> None:
    # More than the writer inserts in one SQLite statement (points.ROWS_A_STEP), one
    # of them twice in the same commit and one sent again in the next.
    gauges = [point(GAUGE, name="g", value=float(i), monotonic=False, temporality=0,
                    attributes={"i": i}) for i in range(70)]
    write(store, *gauges, gauges[40])
    write(store, gauges[3], point(GAUGE, 120, name="g", value=7.0, monotonic=False,
                                  temporality=0, attributes={"i": 3}))
    rows = stored(store, "g")
    assert len(rows) == 71
    assert sorted(r["value"] for r in rows) == sorted([*map(float, range(70)), 7.0])


def test_a_first_point_without_start_time_is_only_a_baseline(store: Store) -> None:
    write(store, point(start_s=0, value=100))
    write(store, point(time_s=120, start_s=0, value=104))
    assert values(store) == [(120, 4.0)]


def test_delta_and_non_monotonic_sums_pass_through(store: Store) -> None:
    write(store, point(temporality=TEMPORALITY_DELTA, value=3),
          point(time_s=120, temporality=TEMPORALITY_DELTA, value=2))
    write(store, point(temporality=TEMPORALITY_DELTA, value=3))  # re-sent: stored once
    write(store, point(name="queue", monotonic=False, value=7),
          point(name="queue", time_s=120, monotonic=False, value=4))
    assert values(store) == [(60, 3.0), (120, 2.0)]
    assert values_of(store, "queue") == [(60, 7.0), (120, 4.0)]
    with store.reader.connect() as conn:
        reading = dict(conn.execute(sa.text("SELECT name, points FROM metric_series")).all())
    assert reading == {"requests": "delta", "queue": "value"}


def test_cumulative_histograms_become_deltas(store: Store) -> None:
    write(store, duration(60, [1, 2, 0, 0], 0.1, min=0.005, max=0.09))
    write(store, duration(120, [1, 5, 1, 0], 0.8, min=0.005, max=0.5))
    rows = stored(store, "http.server.request.duration")
    assert [(r["count"], as_json(r["buckets"])["counts"]) for r in rows] == [
        (3, [1, 2, 0, 0]), (4, [0, 3, 1, 0])]
    assert rows[1]["sum"] == pytest.approx(0.7)
    assert rows[1]["min"] is None and rows[0]["min"] == 0.005


def test_exponential_histograms_become_deltas_across_a_scale_change(store: Store) -> None:
    def exp(time_s: int, scale: int, offset: int, counts: list[int]) -> MetricPoint:
        return point(EXPONENTIAL_HISTOGRAM, time_s, count=sum(counts), sum=1.0, scale=scale,
                     positive_offset=offset, positive_counts=counts, name="exp", monotonic=False)
    write(store, exp(60, 2, 4, [1, 1, 1, 1]))
    write(store, exp(120, 1, 2, [3, 4]))  # the SDK lowered the scale: 4,5 -> 2; 6,7 -> 3
    rows = stored(store, "exp")
    buckets = [as_json(r["buckets"]) for r in rows]
    assert [r["count"] for r in rows] == [4, 3]
    assert buckets[1]["scale"] == 1 and buckets[1]["positive"] == {"offset": 2, "counts": [1, 2]}


def rollups(store: Store) -> list[tuple[Any, ...]]:
    with store.reader.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(
            "SELECT service, env, method, route, minute, count, error_count "
            "FROM metric_request_rollups ORDER BY minute, count"))]


def latency(store: Store) -> dict[int, int]:
    """The metric rollups' latency buckets, every row's added up."""
    out: dict[int, int] = {}
    with store.reader.connect() as conn:
        for (buckets,) in conn.execute(sa.text("SELECT buckets FROM metric_request_rollups")):
            for bucket, n in json.loads(buckets).items():
                out[int(bucket)] = out.get(int(bucket), 0) + n
    return out


def test_http_server_durations_feed_the_metric_rollups_once(store: Store) -> None:
    write(store, duration(60, [1, 2, 0, 0], 0.1), duration(60, [0, 0, 1, 0], 0.5, status=503))
    write(store, duration(120, [1, 5, 1, 0], 0.8))
    write(store, duration(120, [1, 5, 1, 0], 0.8))  # re-sent
    minute = T0 // S
    assert rollups(store) == [("web", "prod", "GET", "/a", minute + 60, 4, 1),
                              ("web", "prod", "GET", "/a", minute + 120, 4, 0)]
    with store.reader.connect() as conn:
        plain = conn.execute(sa.text("SELECT count(*) FROM request_rollups")).scalar()
    assert sum(latency(store).values()) == 8 and plain == 0


def test_delta_durations_re_sent_are_counted_once(store: Store) -> None:
    d = duration(60, [1, 2, 0, 0], 0.1, temporality=TEMPORALITY_DELTA)
    write(store, d)
    write(store, d)
    assert [r[5] for r in rollups(store)] == [3]


def test_durations_past_any_bucket_are_counted_in_the_last(store: Store) -> None:
    # 1e308 s is a finite bound but no finite number of milliseconds.
    huge = point(HISTOGRAM, 60, 1, TEMPORALITY_DELTA, name="http.server.request.duration",
                 unit="s", count=3, sum=None, bounds=[0.01, 1e308], bucket_counts=[1, 1, 1],
                 attributes={"http.request.method": "GET", "http.route": "/a"})
    write(store, huge)
    assert [r[5] for r in rollups(store)] == [3]
    assert [n for _, n in sorted(latency(store).items())] == [1, 2]


@pytest.mark.postgres
def test_two_writers_on_postgres_neither_double_count_nor_lose(pg_url: str) -> None:
    """Two collectors' writers commit cumulative points of the same series at once:
    the state rows are locked, so the deltas add up to the last cumulative value."""
    setup = Store(pg_url)
    setup.upgrade()
    setup.dispose()
    errors: list[BaseException] = []

    def run(times: range) -> None:
        store = Store(pg_url)
        try:
            for t in times:
                write(store, point(time_s=60 * t, value=10 * t),
                      duration(60 * t, [t, t, 0, 0], 0.1 * t))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            store.dispose()

    threads = [threading.Thread(target=run, args=(range(start, 41, 2),)) for start in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    store = Store(pg_url)
    total = sum(v for _, v in values(store))
    durations = stored(store, "http.server.request.duration")
    counted = sum(r[5] for r in rollups(store))
    store.dispose()
    # Each commit stores the delta since the newest state; an older point arriving after
    # a newer one is skipped, so the total is the newest cumulative value, exactly.
    assert total == 400
    assert sum(r["count"] for r in durations) == 80 and counted == 80


def test_performance_takes_metrics_or_spans_per_service_never_both(store: Store) -> None:
    ts_us = (T0 + 90 * S) // 1000
    spans = [RequestMetric("GET", "/a", 200, 5.0, ts_us, service="web", env="prod")
             for _ in range(6)]  # the same requests the metric below counts, as spans
    other = [RequestMetric("GET", "/b", 500, 7.0, ts_us, service="api", env="prod")
             for _ in range(3)]
    with store.writer.begin() as conn:
        write_batches(conn, [Batch(1, requests=spans + other)], 1)
    write(store, duration(120, [1, 2, 0, 0], 0.1, temporality=TEMPORALITY_DELTA),
          duration(120, [0, 2, 1, 0], 0.5, status=503, temporality=TEMPORALITY_DELTA))
    start, end = T0 // S, T0 // S + 600
    window = performance.window(store, 1, start, end)
    assert (window.count, window.error_count) == (9, 6)  # web: 6 from metrics; api: 3
    assert {(s.service, s.count) for s in performance.services(store, 1, start, end)} == {
        ("web", 6), ("api", 3)}
    routes = {r.route: (r.count, r.error_count) for r in performance.routes(store, 1, start,
                                                                              end)}
    assert routes == {"/a": (6, 3), "/b": (3, 3)}
    series = performance.series(store, 1, start, end, 60, service="web")
    assert sum(series.count) == 6
    # p95 of web's 6 requests: in the (0.1, 1] s bucket, read just inside its upper
    # bound (histogram.bucket_at_most: never past it, from the minutes or the hours).
    web = performance.window(store, 1, start, end, service="web")
    assert web.p95_ms is not None and 890 < web.p95_ms <= 1000
    # A range in which web sent no metric: its span rows count.
    before = performance.window(store, 1, start, start + 120, service="web")
    assert before.count == 6 and before.p95_ms == pytest.approx(5.0, rel=0.01)


def test_values_json_cannot_carry_are_stored_as_null(store: Store) -> None:
    write(store, point(GAUGE, name="g", value=float("nan"), flags=1, monotonic=False,
                       temporality=0),
          point("summary", name="latency", temporality=0, count=3, sum=float("inf"),
                quantiles=[(0.5, 2.0), (0.99, float("nan"))], monotonic=False))
    (gauge,) = stored(store, "g")
    (summary,) = stored(store, "latency")
    assert gauge["value"] is None and gauge["flags"] == 1
    assert summary["sum"] is None and summary["count"] == 3
    assert as_json(summary["buckets"]) == {"quantiles": [[0.5, 2.0], [0.99, None]]}


def _duration_point(count: int, total_s: float, at_ns: int) -> bytes:
    """One delta point of http.server.request.duration, every request under 100 ms."""
    request = ExportMetricsServiceRequest()
    resource = request.resource_metrics.add()
    name = resource.resource.attributes.add()
    name.key, name.value.string_value = "service.name", "web"
    metric = resource.scope_metrics.add().metrics.add()
    metric.name, metric.unit = "http.server.request.duration", "s"
    metric.histogram.aggregation_temporality = metrics_pb2.AGGREGATION_TEMPORALITY_DELTA
    point = metric.histogram.data_points.add()
    point.start_time_unix_nano, point.time_unix_nano = at_ns - 10**9, at_ns
    point.count, point.sum = count, total_s
    point.explicit_bounds.extend([0.1, 1.0])
    point.bucket_counts.extend([count, 0, 0])
    for key, value in (("http.route", "/x"), ("http.request.method", "GET")):
        attribute = point.attributes.add()
        attribute.key, attribute.value.string_value = key, value
    return request.SerializeToString()


def test_a_point_of_implausibly_many_requests_is_stored_but_left_out_of_the_rollups(
        start: Callable[..., Server], db_url: str) -> None:
    # Two points of 2^63 - 1 requests overflowed the rollup row's BIGINT count: on
    # PostgreSQL every later commit touching that row failed (500), for good.
    server = start(db_url)
    now = time.time_ns() // 60_000_000_000 * 60_000_000_000 + 5 * 10**9
    sent = [(2**63 - 1, 1.8e274), (2**63 - 1, 1.0), (5, 0.25)]
    for n, (count, total) in enumerate(sent):
        answer = requests.post(server.base + "/ingest/v1/metrics",
                               data=_duration_point(count, total, now + n * 10**6),
                               headers={"Authorization": f"Bearer {server.key}",
                                        "Content-Type": "application/x-protobuf"}, timeout=30)
        assert answer.status_code == 202, answer.text
    assert server.query("SELECT count(*) FROM metric_points") == [(3,)]
    assert server.query("SELECT sum(count) FROM metric_request_rollups") == [(5,)]
