"""The Metrics read queries on SQLite and PostgreSQL, over points written by the
store's real writer (storage/wire/batch.py write_batches, cumulative values turned into
deltas there): sums and rates of counters, last/avg/min/max of gauges, histogram
percentiles within their bucket, filters, grouping and its cap."""

from __future__ import annotations

from typing import Any

import pytest

from model.records import (
    EXPONENTIAL_HISTOGRAM,
    GAUGE,
    HISTOGRAM,
    SUM,
    SUMMARY,
    TEMPORALITY_CUMULATIVE,
    TEMPORALITY_DELTA,
    Batch,
    MetricPoint,
)
from storage.queries import metric_series as mq
from storage.store import Store
from storage.wire.batch import write_batches

S = 1_000_000_000
T0 = 1_764_000_000  # a multiple of 60 and 600: steps start on it
PROJECT = 1
WEB = {"service.name": "web", "host.name": "h1"}
API = {"service.name": "api", "host.name": "h2"}


def point(name: str, kind: str, time_s: int, resource: dict[str, Any] = WEB,
          attributes: dict[str, Any] | None = None, temporality: int = TEMPORALITY_CUMULATIVE,
          start_s: int = 0, **values: Any) -> MetricPoint:
    return MetricPoint(name=name, unit=values.pop("unit", "1"),
                       description=values.pop("description", ""), kind=kind,
                       temporality=temporality, monotonic=values.pop("monotonic", kind == SUM),
                       service_name=resource["service.name"], resource_attributes=resource,
                       scope_name="test", attributes=attributes or {},
                       start_ns=(T0 + start_s) * S, time_ns=(T0 + time_s) * S, **values)


def write(store: Store, *points: MetricPoint) -> None:
    """One commit per call, as one request would be."""
    with store.writer.begin() as conn:
        write_batches(conn, [Batch(PROJECT, metrics=list(points))], 1)


def query(name: str, steps: int = 10, step_s: int = 60, **options: Any) -> mq.Query:
    return mq.Query(name=name, start_ns=T0 * S, end_ns=(T0 + steps * step_s) * S,
                    step_s=step_s, **options)


def data(store: Store, name: str, **options: Any) -> mq.MetricData:
    result = mq.metric_data(store, PROJECT, query(name, **options))
    assert result is not None
    return result


def only(result: mq.MetricData) -> list[float | None]:
    (group,) = result.groups
    return group.values


def test_a_cumulative_counter_reads_as_sums_and_rates_per_step(store: Store) -> None:
    # Cumulative 10, 30, 60 at 1:00, 2:00, 3:00 (the writer stores deltas 10, 20, 30),
    # then 100 at 3:30, in the same step as 3:00.
    for time_s, total in ((60, 10), (120, 30), (180, 60), (210, 100)):
        write(store, point("requests", SUM, time_s, value=total))
    result = data(store, "requests", steps=5)
    assert (result.reading, result.aggregation) == ("delta", "sum")
    assert result.t == [T0 + i * 60 for i in range(5)]
    assert only(result) == [None, 10.0, 20.0, 70.0, None]
    rate = data(store, "requests", steps=5, aggregation="rate")
    assert only(rate) == [None, 10 / 60, 20 / 60, 70 / 60, None]
    # A wider step adds them up: 10 + 20 + 70 in the first 5 minutes.
    assert only(data(store, "requests", steps=1, step_s=300)) == [100.0]
    assert only(data(store, "requests", steps=1, step_s=300, aggregation="rate")) == [100 / 300]


def test_a_delta_counter_is_added_up_as_sent(store: Store) -> None:
    write(store, point("jobs", SUM, 30, temporality=TEMPORALITY_DELTA, start_s=0, value=4),
          point("jobs", SUM, 50, temporality=TEMPORALITY_DELTA, start_s=30, value=6),
          point("jobs", SUM, 90, temporality=TEMPORALITY_DELTA, start_s=50, value=1))
    assert only(data(store, "jobs", steps=2)) == [10.0, 1.0]


def test_a_gauge_reads_as_last_avg_min_max(store: Store) -> None:
    write(store, *(point("temp", GAUGE, t, temporality=0, value=v, monotonic=False)
                   for t, v in ((10, 20.0), (40, 26.0), (50, 23.0), (70, -4.0))))
    assert only(data(store, "temp", steps=2)) == [23.0, -4.0]  # last is the default
    assert only(data(store, "temp", steps=2, aggregation="avg")) == [23.0, -4.0]
    assert only(data(store, "temp", steps=2, aggregation="min")) == [20.0, -4.0]
    assert only(data(store, "temp", steps=2, aggregation="max")) == [26.0, -4.0]
    with pytest.raises(ValueError, match="'agg'.* must be one of last, avg, min, max"):
        data(store, "temp", aggregation="rate")


def test_a_summary_reads_as_its_mean(store: Store) -> None:
    write(store, point("legacy", SUMMARY, 10, temporality=0, count=4, sum=10.0,
                       quantiles=[(0.5, 2.0), (0.99, 4.0)]),
          point("legacy", SUMMARY, 20, temporality=0, count=0, sum=0.0))
    result = data(store, "legacy", steps=1, aggregation="avg")
    assert (result.reading, only(result)) == ("value", [2.5])  # the empty point: no value


def test_grouped_gauges_add_up_each_series_last_value(store: Store) -> None:
    for host, resource in (("a", {"service.name": "web", "host.name": "a"}),
                           ("b", {"service.name": "web", "host.name": "b"})):
        base = 100.0 if host == "a" else 10.0
        write(store, point("memory", GAUGE, 10, resource, {"state": "used"}, 0, value=base),
              point("memory", GAUGE, 20, resource, {"state": "used"}, 0, value=base + 1),
              point("memory", GAUGE, 20, resource, {"state": "free"}, 0, value=5.0))
    # Ungrouped, "last" adds up each series' last value: 101 + 11 + 5 + 5.
    assert only(data(store, "memory", steps=1)) == [122.0]
    by_host = data(store, "memory", steps=1, group_by="host.name")  # a resource attribute
    assert [(g.group, g.series, g.values) for g in by_host.groups] == [
        ("a", 2, [106.0]), ("b", 2, [16.0])]
    used = data(store, "memory", steps=1, filters={"state": "used"}, group_by="host.name")
    assert [(g.group, g.values) for g in used.groups] == [("a", [101.0]), ("b", [11.0])]
    assert used.series_matched == 2
    assert data(store, "memory", steps=1, aggregation="max", filters={"state": "used"}
                ).groups[0].values == [101.0]
    assert data(store, "memory", steps=1, filters={"state": "gone"}).groups == []


def histogram(time_s: int, counts: list[int], total: float, **options: Any) -> MetricPoint:
    return point("latency", HISTOGRAM, time_s, unit="ms", count=sum(counts), sum=total,
                 bounds=[10.0, 20.0, 50.0, 100.0, 200.0], bucket_counts=counts, **options)


def test_histogram_percentiles_lie_in_the_bucket_of_the_true_value(store: Store) -> None:
    # 100 values: 10 in (0,10], 20 in (10,20], 40 in (20,50], 20 in (50,100], 8 in
    # (100,200], 2 above 200. Rank 50 is in (20,50], rank 95 and 99 above 100.
    first = [10, 20, 40, 20, 8, 2]
    write(store, histogram(30, first, 4000.0))
    # Cumulative: the next point's delta is exactly `first` again, in the next step.
    write(store, histogram(90, [2 * c for c in first], 8000.0))
    result = data(store, "latency", steps=2)
    assert (result.reading, result.aggregation) == ("histogram", "p95")
    (group,) = result.groups
    assert group.count == [100, 100] and group.sum == [4000.0, 4000.0]
    for values in (only(result), only(data(store, "latency", steps=1, step_s=120))):
        # Linear inside (100, 200]: ranks 90 to 98 held there, rank 95 at 5/8.
        assert values[0] == pytest.approx(162.5)
    p50 = only(data(store, "latency", steps=2, aggregation="p50"))
    assert all(v is not None and 20 < v <= 50 for v in p50)
    # Rank 99 is past every bounded bucket: the open last one answers its lower bound.
    assert only(data(store, "latency", steps=2, aggregation="p99")) == [200.0, 200.0]
    assert only(data(store, "latency", steps=2, aggregation="count")) == [100.0, 100.0]
    assert only(data(store, "latency", steps=2, aggregation="sum")) == [4000.0, 4000.0]


def test_delta_histograms_with_min_and_max_close_the_open_buckets(store: Store) -> None:
    write(store, histogram(30, [0, 0, 0, 0, 0, 4], 1200.0, temporality=TEMPORALITY_DELTA,
                           min=250.0, max=400.0))
    values = only(data(store, "latency", steps=1, aggregation="p99"))
    assert values[0] is not None and 250.0 <= values[0] <= 400.0


def exponential(time_s: int, scale: int, offset: int, counts: list[int]) -> MetricPoint:
    return point("size", EXPONENTIAL_HISTOGRAM, time_s, temporality=TEMPORALITY_DELTA,
                 start_s=time_s - 10, count=sum(counts), sum=1.0, scale=scale,
                 positive_offset=offset, positive_counts=counts)


def test_exponential_histograms_merge_at_the_lower_scale(store: Store) -> None:
    # Scale 0: bucket i is (2**i, 2**(i+1)]; 10 values in (8, 16], 10 in (16, 32].
    # Scale 1 (base √2): indexes 8..9 are (16, 32]; 10 more values there.
    write(store, exponential(10, 0, 3, [10, 10]), exponential(20, 1, 8, [6, 4]))
    result = data(store, "size", steps=1, aggregation="p50")
    (group,) = result.groups
    assert group.count == [30]
    # Rank 15 of 30: past the 10 in (8, 16], in (16, 32] which holds 20.
    assert group.values[0] is not None and 16 < group.values[0] <= 32
    p95 = only(data(store, "size", steps=1, aggregation="p95"))[0]
    assert p95 is not None and 16 < p95 <= 32


def test_grouping_is_capped_largest_first_and_says_so(store: Store) -> None:
    write(store, *(point("hits", SUM, 30, attributes={"user": f"u{i:02}"},
                         temporality=TEMPORALITY_DELTA, value=i + 1) for i in range(25)))
    result = data(store, "hits", steps=1, group_by="user", max_groups=20)
    assert (result.groups_total, result.max_groups, result.groups_capped) == (25, 20, True)
    assert [g.group for g in result.groups] == [f"u{i:02}" for i in range(24, 4, -1)]
    assert not data(store, "hits", steps=1, group_by="user", max_groups=25).groups_capped
    # Series without the attribute make one group of their own, named None.
    write(store, point("hits", SUM, 40, temporality=TEMPORALITY_DELTA, value=1000))
    top = data(store, "hits", steps=1, group_by="user").groups[0]
    assert (top.group, top.values) == (None, [1000.0])


def test_filters_match_attribute_text_and_the_service(store: Store) -> None:
    write(store, point("codes", SUM, 30, attributes={"status": 500, "ok": False},
                       temporality=TEMPORALITY_DELTA, value=3),
          point("codes", SUM, 30, attributes={"status": 200, "ok": True},
                temporality=TEMPORALITY_DELTA, value=7),
          point("codes", SUM, 30, API, {"status": 200, "ok": True},
                temporality=TEMPORALITY_DELTA, value=100))
    assert only(data(store, "codes", steps=1, filters={"status": "500"})) == [3.0]
    assert only(data(store, "codes", steps=1, filters={"ok": "true"}, service="web")) == [7.0]
    result = data(store, "codes", steps=1, group_by="service.name")
    assert [(g.group, g.values) for g in result.groups] == [("api", [100.0]), ("web", [10.0])]
    assert result.services == ["api", "web"]
    assert {"status", "ok", "service.name", "host.name"} <= set(result.attribute_keys)


def test_unknown_metric_or_kind_is_none(store: Store) -> None:
    write(store, point("requests", SUM, 30, value=1))
    assert mq.metric_data(store, PROJECT, query("nope")) is None
    assert mq.metric_data(store, PROJECT, query("requests", kind=GAUGE)) is None
    assert mq.metric_data(store, PROJECT + 1, query("requests")) is None
    # A name from a URL path may hold what no stored name can (PostgreSQL refuses NUL).
    assert mq.metric_data(store, PROJECT, query("requests\x00")) is None


def test_the_list_names_each_metric_once_with_its_services(store: Store) -> None:
    write(store, point("requests", SUM, 30, description="Requests served", value=1),
          point("requests", SUM, 90, API, value=1),
          point("requests", SUM, 90, API, {"route": "/b"}, value=1),
          point("temp", GAUGE, 50, temporality=0, unit="Cel", value=3.0, monotonic=False))
    listed = {m.name: m for m in mq.list_metrics(store, PROJECT)}
    assert list(listed) == ["requests", "temp"]
    requests = listed["requests"]
    assert (requests.kind, requests.unit, requests.description, requests.services,
            requests.series, requests.kinds) == ("sum", "1", "Requests served",
                                                 ["api", "web"], 3, ["sum"])
    assert requests.last_seen_ns == (T0 + 90) * S
    assert (listed["temp"].kind, listed["temp"].unit) == ("gauge", "Cel")
    assert [m.name for m in mq.list_metrics(store, PROJECT, "api")] == ["requests"]
    assert mq.list_metrics(store, PROJECT + 1) == []


def test_one_name_of_two_kinds_reads_the_more_common_unless_told(store: Store) -> None:
    write(store, point("mixed", SUM, 30, temporality=TEMPORALITY_DELTA, value=2),
          point("mixed", SUM, 30, API, temporality=TEMPORALITY_DELTA, value=3),
          point("mixed", GAUGE, 30, temporality=0, value=7.0, monotonic=False))
    counter = data(store, "mixed", steps=1)
    assert (counter.kind, counter.kinds, only(counter)) == ("sum", ["sum", "gauge"], [5.0])
    gauge = data(store, "mixed", steps=1, kind=GAUGE)
    assert (gauge.kind, gauge.reading, only(gauge)) == ("gauge", "value", [7.0])
    (listed,) = mq.list_metrics(store, PROJECT)
    assert (listed.kind, listed.kinds, listed.series) == ("sum", ["sum", "gauge"], 3)
