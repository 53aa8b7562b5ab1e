"""Demo metrics for the screenshots (tests/dashboard/screenshots.py): a worker's
counter, gauge and job-duration histogram over the last 24 hours, per queue, sent
as one OTLP/HTTP protobuf request (delta temporality) through the real door."""

from __future__ import annotations

import math
import random
import time

import requests
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1 import metrics_pb2

from tests.support.server import Server

S = 1_000_000_000
STEP_S = 300
QUEUES = {"emails": 1.0, "invoices": 0.4, "thumbnails": 2.2}
BOUNDS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]


def _attrs(**values: str) -> list[KeyValue]:
    return [KeyValue(key=k, value=AnyValue(string_value=v)) for k, v in values.items()]


def metrics_request(now: float) -> ExportMetricsServiceRequest:
    rnd = random.Random(7)
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    rm.resource.attributes.extend(_attrs(**{"service.name": "worker", "host.name": "w-1"}))
    sm = rm.scope_metrics.add()
    sm.scope.name = "shop.worker"
    jobs = sm.metrics.add(name="worker.jobs", unit="{job}", description="Jobs finished")
    jobs.sum.aggregation_temporality = metrics_pb2.AGGREGATION_TEMPORALITY_DELTA
    jobs.sum.is_monotonic = True
    depth = sm.metrics.add(name="worker.queue.depth", unit="{job}",
                           description="Jobs waiting")
    duration = sm.metrics.add(name="worker.job.duration", unit="s",
                              description="Time to run one job")
    duration.histogram.aggregation_temporality = metrics_pb2.AGGREGATION_TEMPORALITY_DELTA
    end = int(now) // STEP_S * STEP_S
    for t in range(end - 86_400, end, STEP_S):
        daily = 1 + 0.6 * math.sin((t % 86_400) / 86_400 * 2 * math.pi)
        for queue, weight in QUEUES.items():
            attrs = _attrs(queue=queue)
            n = int(40 * weight * daily * rnd.uniform(0.8, 1.2))
            point = jobs.sum.data_points.add(start_time_unix_nano=(t - STEP_S) * S,
                                             time_unix_nano=t * S, as_int=n)
            point.attributes.extend(attrs)
            gauge = depth.gauge.data_points.add(time_unix_nano=t * S,
                                                as_int=int(n * rnd.uniform(0.1, 0.5)))
            gauge.attributes.extend(attrs)
            values = [rnd.lognormvariate(math.log(0.3 * weight), 0.6) for _ in range(n)]
            counts = [0] * (len(BOUNDS) + 1)
            for v in values:
                counts[next((i for i, b in enumerate(BOUNDS) if v <= b), len(BOUNDS))] += 1
            hist = duration.histogram.data_points.add(
                start_time_unix_nano=(t - STEP_S) * S, time_unix_nano=t * S, count=n,
                sum=sum(values), explicit_bounds=BOUNDS, bucket_counts=counts)
            if values:
                hist.min, hist.max = min(values), max(values)
            hist.attributes.extend(attrs)
    return request


def seed_metrics(server: Server, key: str | None = None) -> None:
    response = requests.post(
        server.base + "/ingest/v1/metrics", timeout=60,
        data=metrics_request(time.time()).SerializeToString(),
        headers={"Authorization": f"Bearer {key or server.key}",
                 "Content-Type": "application/x-protobuf"})
    assert response.status_code == 202, response.text
