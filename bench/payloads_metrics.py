"""A realistic metrics export for the benchmark: what the OpenTelemetry Python SDK of
one web process sends every interval, 50 series (HTTP server and database client
duration histograms, counters, up-down counters, gauges), as OTLP protobuf.

Bodies are templates (bench/payloads.py): serialised once per process slot, then
only their times are rewritten per request. Each request's start time moves with
its time, so every cumulative point is a reset for the store: the whole value is a
delta, and the HTTP durations reach the request rollups in every request.
"""

from __future__ import annotations

import random

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.metrics.v1 import metrics_pb2

from bench.payloads import BASE_NS, ROUTES, Template, _kv, _resource, _time_offsets

SERIES_PER_REQUEST = 50
START_NS = BASE_NS - 60_000_000_000
CUMULATIVE = metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE
BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]


def _histogram(metric: metrics_pb2.Metric, rng: random.Random,
               attributes: dict[str, object]) -> None:
    metric.histogram.aggregation_temporality = CUMULATIVE
    counts = [rng.randrange(0, 200) for _ in range(len(BOUNDS) + 1)]
    point = metric.histogram.data_points.add(
        start_time_unix_nano=START_NS, time_unix_nano=BASE_NS, count=sum(counts),
        sum=sum(counts) * 0.05, min=0.001, max=4.2, explicit_bounds=BOUNDS,
        bucket_counts=counts)
    point.attributes.extend(_kv(k, v) for k, v in attributes.items())


def _sum(metric: metrics_pb2.Metric, value: float, monotonic: bool,
         attributes: dict[str, object]) -> None:
    metric.sum.aggregation_temporality = CUMULATIVE
    metric.sum.is_monotonic = monotonic
    point = metric.sum.data_points.add(start_time_unix_nano=START_NS,
                                       time_unix_nano=BASE_NS, as_double=value)
    point.attributes.extend(_kv(k, v) for k, v in attributes.items())


def metrics_proto(seed: int = 0) -> Template:
    rng = random.Random(seed)
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    resource = _resource("checkout")
    resource["service.instance.id"] = f"checkout-{seed}"  # one process per template
    rm.resource.attributes.extend(_kv(k, v) for k, v in resource.items())
    sm = rm.scope_metrics.add()
    sm.scope.name = "opentelemetry.instrumentation.flask"
    n = 0
    duration = sm.metrics.add(name="http.server.request.duration", unit="s")
    for route in ROUTES:  # 16 series
        for method, status in (("GET", 200), ("POST", 500)):
            _histogram(duration, rng, {"http.request.method": method, "http.route": route,
                                       "http.response.status_code": status,
                                       "url.scheme": "https"})
            n += 1
    active = sm.metrics.add(name="http.server.active_requests", unit="{request}")
    for method in ("GET", "POST"):
        _sum(active, rng.randrange(0, 20), False, {"http.request.method": method})
        n += 1
    db = sm.metrics.add(name="db.client.operation.duration", unit="s")
    for op in ("SELECT", "INSERT", "UPDATE", "DELETE"):  # 8 series
        for table in ("orders", "products"):
            _histogram(db, rng, {"db.system.name": "postgresql", "db.operation.name": op,
                                 "db.collection.name": table})
            n += 1
    sm2 = rm.scope_metrics.add()
    sm2.scope.name = "opentelemetry.instrumentation.system_metrics"
    cpu = sm2.metrics.add(name="process.cpu.time", unit="s")
    for state in ("user", "system"):
        _sum(cpu, rng.uniform(100, 1000), True, {"cpu.mode": state})
        n += 1
    util = sm2.metrics.add(name="system.cpu.utilization", unit="1")
    for core in range(4):
        point = util.gauge.data_points.add(time_unix_nano=BASE_NS, as_double=rng.random())
        point.attributes.extend([_kv("cpu.logical_number", core), _kv("cpu.mode", "user")])
        n += 1
    memory = sm2.metrics.add(name="system.memory.usage", unit="By")
    for state in ("used", "free", "cached"):
        _sum(memory, rng.randrange(10**9, 10**10), False, {"system.memory.state": state})
        n += 1
    network = sm2.metrics.add(name="system.network.io", unit="By")
    for device in ("eth0", "lo"):
        for direction in ("receive", "transmit"):
            _sum(network, rng.randrange(10**6, 10**9), True,
                 {"network.interface.name": device, "network.io.direction": direction})
            n += 1
    gc = sm2.metrics.add(name="cpython.gc.collections", unit="{collection}")
    for generation in range(3):
        _sum(gc, rng.randrange(10, 10**4), True, {"cpython.gc.generation": generation})
        n += 1
    orders = sm2.metrics.add(name="shop.orders.created", unit="{order}")
    for channel in ("web", "ios", "android", "partner"):
        for paid in (True, False):
            _sum(orders, rng.randrange(1, 10**5), True, {"channel": channel, "paid": paid})
            n += 1
    assert n == SERIES_PER_REQUEST, n
    body = request.SerializeToString()
    times = _time_offsets(body, [START_NS, BASE_NS], as_text=False)
    return Template(body, [], times, json=False, spans=SERIES_PER_REQUEST)


# The shape of issue 23: one process's cumulative export of 200 series, 40 HTTP server
# duration histograms (semantic-convention buckets), 80 monotonic sums and 80 gauges,
# each request later than the last and every value grown since it (no resets: the
# writer converts every cumulative point to a delta).
GROWING_HISTOGRAMS, GROWING_SUMS, GROWING_GAUGES = 40, 80, 80
GROWING_POINTS = GROWING_HISTOGRAMS + GROWING_SUMS + GROWING_GAUGES
GROWING_ROUTES = ("/api/orders/{id}", "/api/cart", "/api/products", "/api/products/{id}",
                  "/api/login", "/api/search", "/health", "/api/payments/{id}/capture",
                  "/api/users/{id}", "/api/reviews")


def growing_proto(slot: int, n: int, time_ns: int) -> bytes:
    """Request number `n` (1, 2, ...) of process `slot`: cumulative since START_NS, each
    series' values `n` times those of its first request."""
    rng = random.Random(slot)
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    resource = _resource("checkout")
    resource["service.instance.id"] = f"checkout-{slot}"
    rm.resource.attributes.extend(_kv(k, v) for k, v in resource.items())
    sm = rm.scope_metrics.add()
    sm.scope.name = "opentelemetry.instrumentation.flask"
    duration = sm.metrics.add(name="http.server.request.duration", unit="s")
    duration.histogram.aggregation_temporality = CUMULATIVE
    for i in range(GROWING_HISTOGRAMS):
        route = GROWING_ROUTES[i // 4]
        method, status = (("GET", 200), ("GET", 500), ("POST", 200), ("POST", 500))[i % 4]
        counts = [rng.randrange(0, 20) * n for _ in range(len(BOUNDS) + 1)]
        point = duration.histogram.data_points.add(
            start_time_unix_nano=START_NS, time_unix_nano=time_ns, count=sum(counts),
            sum=sum(counts) * 0.05, min=0.001, max=12.0, explicit_bounds=BOUNDS,
            bucket_counts=counts)
        point.attributes.extend([_kv("http.request.method", method), _kv("http.route", route),
                                 _kv("http.response.status_code", status),
                                 _kv("url.scheme", "https")])
    sums = sm.metrics.add(name="shop.items.sold", unit="{item}")
    sums.sum.aggregation_temporality = CUMULATIVE
    sums.sum.is_monotonic = True
    for i in range(GROWING_SUMS):
        point = sums.sum.data_points.add(start_time_unix_nano=START_NS,
                                         time_unix_nano=time_ns,
                                         as_double=float(rng.randrange(1, 1000) * n))
        point.attributes.extend([_kv("sku", f"sku-{i}"), _kv("channel", "web")])
    gauges = sm.metrics.add(name="queue.depth", unit="{message}")
    for i in range(GROWING_GAUGES):
        point = gauges.gauge.data_points.add(time_unix_nano=time_ns,
                                             as_double=rng.random() * n)
        point.attributes.extend([_kv("queue", f"queue-{i}")])
    return request.SerializeToString()
