"""A realistic metrics export for the benchmark: what the OpenTelemetry Python SDK of
one web process sends every interval, as OTLP protobuf, cumulative temporality (the
SDK's default): 200 points, 40 histogram series (HTTP server and client and database
durations), 80 sums (counters and up-down counters) and 80 gauges.

Successive exports of one series carry growing cumulative values under the same
start time, as an SDK's do, so the writer takes the difference from the last point
of each series (storage/writer/metric_delta.py) rather than seeing a reset every
time. Bodies are templates serialised once per process slot: every field that
changes from one export to the next (times, counts, sums, bucket counts, values) is
fixed-width in OTLP (fixed64 and double), so `render` writes them in place.
"""

from __future__ import annotations

import random
import struct
import time
from dataclasses import dataclass

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.metrics.v1 import metrics_pb2

from bench.payloads import ROUTES, TABLES, TOPICS, _kv, _resource

HISTOGRAMS, SUMS, GAUGES = 40, 80, 80
POINTS_PER_REQUEST = HISTOGRAMS + SUMS + GAUGES
CUMULATIVE = metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE
BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
# Field values that mark a slot in the serialised body: slot i holds SENTINEL | i
# until `render` overwrites it (its 8 bytes as a double are a finite number).
SENTINEL = 0x4150_5A5A_0000_0000
START, NOW = "start", "now"

# Series: (metric, unit, attribute sets). Histograms and sums as an instrumented web
# process exports them; the gauges are the system and pool readings it observes.
_METHODS = (("GET", 200), ("POST", 500))
_HOSTS = ("payments.internal", "catalog.internal", "api.stripe.com", "search.internal")
_OPS = ("SELECT", "INSERT", "UPDATE", "DELETE")
_QUEUES = ("emails", "webhooks", "exports", "thumbnails", "reindex", "billing")


def _histogram_series() -> list[tuple[str, str, list[dict[str, object]]]]:
    return [
        ("http.server.request.duration", "s",
         [{"http.request.method": m, "http.route": r, "http.response.status_code": s,
           "url.scheme": "https"} for r in ROUTES for m, s in _METHODS]),  # 16
        ("http.client.request.duration", "s",
         [{"http.request.method": m, "server.address": h, "http.response.status_code": s}
          for h in _HOSTS for m, s in _METHODS]),  # 8
        ("db.client.operation.duration", "s",
         [{"db.system.name": "postgresql", "db.operation.name": o, "db.collection.name": t}
          for o in _OPS for t in TABLES[:4]]),  # 16
    ]


def _sum_series() -> list[tuple[str, str, bool, list[dict[str, object]]]]:
    return [
        ("http.server.requests", "{request}", True,
         [{"http.request.method": m, "http.route": r} for r in ROUTES for m, _ in _METHODS]),
        ("http.server.active_requests", "{request}", False,
         [{"http.request.method": m} for m, _ in _METHODS]),
        ("process.cpu.time", "s", True, [{"cpu.mode": m} for m in ("user", "system")]),
        ("system.network.io", "By", True,
         [{"network.interface.name": d, "network.io.direction": x}
          for d in ("eth0", "lo") for x in ("receive", "transmit")]),
        ("cpython.gc.collections", "{collection}", True,
         [{"cpython.gc.generation": g} for g in range(3)]),
        ("shop.orders.created", "{order}", True,
         [{"channel": c, "paid": p} for c in ("web", "ios", "android", "partner")
          for p in (True, False)]),
        ("messaging.client.sent.messages", "{message}", True,
         [{"messaging.destination.name": t, "outcome": o}
          for t in TOPICS for o in ("ok", "timeout")]),
        ("shop.cache.requests", "{request}", True,
         [{"cache.name": c, "cache.result": r} for c in ("products", "sessions", "prices",
                                                          "carts", "users", "search")
          for r in ("hit", "miss")]),
        ("db.client.connection.count", "{connection}", False,
         [{"db.client.connection.pool.name": p, "db.client.connection.state": s}
          for p in ("primary", "replica") for s in ("idle", "used")]),
        ("shop.jobs.processed", "{job}", True,
         [{"queue": q, "outcome": o} for q in _QUEUES for o in ("ok", "failed")]),
        ("system.memory.usage", "By", False,
         [{"system.memory.state": s} for s in ("used", "free", "cached")]),
        ("shop.payments.amount", "EUR", True,
         [{"provider": p} for p in ("stripe", "adyen", "paypal", "invoice", "voucher",
                                     "klarna", "apple_pay", "google_pay")]),
    ]


def _gauge_series() -> list[tuple[str, str, list[dict[str, object]]]]:
    return [
        ("system.cpu.utilization", "1",
         [{"cpu.logical_number": c, "cpu.mode": m} for c in range(4)
          for m in ("user", "system", "iowait", "idle")]),  # 16
        ("system.filesystem.utilization", "1",
         [{"system.device": f"/dev/nvme0n1p{p}", "system.filesystem.mountpoint": m}
          for p, m in enumerate(("/", "/var", "/tmp", "/srv", "/home", "/boot",
                                 "/var/log", "/data"))]),  # 8
        ("shop.queue.depth", "{job}",
         [{"queue": q, "priority": p} for q in _QUEUES for p in ("high", "low")]),  # 12
        ("shop.pool.utilization", "1",
         [{"pool": p, "region": r} for p in ("http", "db", "redis", "kafka")
          for r in ("eu-west-1", "eu-central-1", "us-east-1")]),  # 12
        ("process.runtime.cpython.memory", "By",
         [{"type": t} for t in ("rss", "vms", "heap", "stack")]),  # 4
        ("shop.inventory.level", "{item}",
         [{"warehouse": w, "category": c} for w in ("ams", "fra", "dub", "mad")
          for c in ("books", "games", "garden", "kitchen", "toys", "tools", "music")]),
    ]


# What a slot holds: START, NOW, or (base, step) of a value that grows by `step` per export.
What = str | tuple[float, float]


@dataclass
class CumulativeTemplate:
    """A serialised export and the slots `render` writes: (offset, format, what)."""

    body: bytes
    slots: list[tuple[int, str, What]]
    start_ns: int  # the process's start, the same in every export of a series
    points: int

    def render(self, export: int, now_ns: int) -> bytes:
        """The body of this process's export number `export` (0, 1, …), made at `now_ns`."""
        out = bytearray(self.body)
        pack = struct.pack_into
        for offset, fmt, what in self.slots:
            if isinstance(what, tuple):
                base, step = what
                pack(fmt, out, offset, base + export * step)
            else:
                pack("<Q", out, offset, self.start_ns if what == START else now_ns)
        return bytes(out)


class _Slots:
    """Hands out sentinel field values and remembers what each one stands for."""

    def __init__(self) -> None:
        self.what: list[tuple[str, What]] = []

    def integer(self, what: What) -> int:
        self.what.append(("<Q", what))
        return SENTINEL | (len(self.what) - 1)

    def double(self, base: float, step: float) -> float:
        self.what.append(("<d", (base, step)))
        return float(struct.unpack("<d", struct.pack("<Q", SENTINEL | (len(self.what) - 1)))[0])

    def locate(self, body: bytes) -> list[tuple[int, str, What]]:
        """Where each slot's sentinel is in `body`: one pass over its six high bytes (the
        two low ones are the slot's number)."""
        high = struct.pack("<Q", SENTINEL)[2:]
        offsets: dict[int, int] = {}
        at = body.find(high)
        while at >= 0:
            offsets[int.from_bytes(body[at - 2:at], "little")] = at - 2
            at = body.find(high, at + len(high))
        assert sorted(offsets) == list(range(len(self.what))), "a sentinel is not unique"
        return [(offsets[i], fmt, what) for i, (fmt, what) in enumerate(self.what)]


def metrics_proto(seed: int = 0, start_ns: int | None = None) -> CumulativeTemplate:
    """One process's export (`seed` names the process), cumulative since `start_ns`
    (by default a minute before now)."""
    rng = random.Random(seed)
    slots = _Slots()
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    resource = _resource("checkout")
    resource["service.instance.id"] = f"checkout-{seed}"  # one process per template
    rm.resource.attributes.extend(_kv(k, v) for k, v in resource.items())
    sm = rm.scope_metrics.add()
    sm.scope.name = "opentelemetry.instrumentation.flask"
    counts = {"histogram": 0, "sum": 0, "gauge": 0}
    for name, unit, attribute_sets in _histogram_series():
        metric = sm.metrics.add(name=name, unit=unit)
        metric.histogram.aggregation_temporality = CUMULATIVE
        for attributes in attribute_sets:
            base = [rng.randrange(0, 200) for _ in range(len(BOUNDS) + 1)]
            step = [rng.randrange(0, 20) for _ in base]
            point = metric.histogram.data_points.add(
                start_time_unix_nano=slots.integer(START), time_unix_nano=slots.integer(NOW),
                count=slots.integer((sum(base), sum(step))),
                sum=slots.double(sum(base) * 0.05, sum(step) * 0.05), min=0.001, max=4.2,
                explicit_bounds=BOUNDS,
                bucket_counts=[slots.integer(bs) for bs in zip(base, step, strict=True)])
            point.attributes.extend(_kv(k, v) for k, v in attributes.items())
            counts["histogram"] += 1
    sm2 = rm.scope_metrics.add()
    sm2.scope.name = "opentelemetry.instrumentation.system_metrics"
    for name, unit, monotonic, attribute_sets in _sum_series():
        metric = sm2.metrics.add(name=name, unit=unit)
        metric.sum.aggregation_temporality = CUMULATIVE
        metric.sum.is_monotonic = monotonic
        for attributes in attribute_sets:
            # An up-down counter wanders; a counter only grows.
            grow = rng.uniform(1, 50) if monotonic else 0.0
            point = metric.sum.data_points.add(
                start_time_unix_nano=slots.integer(START), time_unix_nano=slots.integer(NOW),
                as_double=slots.double(rng.uniform(100, 10**6), grow))
            point.attributes.extend(_kv(k, v) for k, v in attributes.items())
            counts["sum"] += 1
    for name, unit, attribute_sets in _gauge_series():
        metric = sm2.metrics.add(name=name, unit=unit)
        for attributes in attribute_sets:
            point = metric.gauge.data_points.add(
                time_unix_nano=slots.integer(NOW), as_double=slots.double(rng.random(), 0.0))
            point.attributes.extend(_kv(k, v) for k, v in attributes.items())
            counts["gauge"] += 1
    assert counts == {"histogram": HISTOGRAMS, "sum": SUMS, "gauge": GAUGES}, counts
    body = request.SerializeToString()
    start = time.time_ns() - 60_000_000_000 if start_ns is None else start_ns
    return CumulativeTemplate(body, slots.locate(body), start, POINTS_PER_REQUEST)
