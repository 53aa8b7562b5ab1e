"""OTLP metrics requests as a Collector sends them: every kind of data point."""

from __future__ import annotations

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1 import metrics_pb2

S = 1_000_000_000
T0 = 1_764_000_000 * S
CUMULATIVE = metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE
DELTA = metrics_pb2.AGGREGATION_TEMPORALITY_DELTA


def kv(**values: str | int) -> list[KeyValue]:
    return [KeyValue(key=k.replace("_", "."), value=AnyValue(string_value=v)
                     if isinstance(v, str) else AnyValue(int_value=v))
            for k, v in values.items()]


def collector_request(time_s: int = 60) -> ExportMetricsServiceRequest:
    """One resource, one scope, one metric of each kind (five data points)."""
    t, start = T0 + time_s * S, T0
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    rm.resource.attributes.extend(kv(service_name="checkout",
                                     deployment_environment_name="prod"))
    sm = rm.scope_metrics.add()
    sm.scope.name, sm.scope.version = "otelcol/hostmetrics", "1.2"

    gauge = sm.metrics.add(name="system.memory.utilization", unit="1",
                           description="Memory in use")
    gp = gauge.gauge.data_points.add(time_unix_nano=t, as_double=0.42)
    gp.attributes.extend(kv(state="used"))

    total = sm.metrics.add(name="system.network.io", unit="By")
    total.sum.aggregation_temporality = CUMULATIVE
    total.sum.is_monotonic = True
    sp = total.sum.data_points.add(start_time_unix_nano=start, time_unix_nano=t, as_int=1234)
    sp.attributes.extend(kv(direction="receive"))
    ex = sp.exemplars.add(time_unix_nano=t, as_int=5, trace_id=bytes(range(16)),
                          span_id=bytes(range(8)))
    ex.filtered_attributes.extend(kv(host="a"))

    hist = sm.metrics.add(name="http.server.request.duration", unit="s")
    hist.histogram.aggregation_temporality = CUMULATIVE
    hp = hist.histogram.data_points.add(start_time_unix_nano=start, time_unix_nano=t,
                                        count=6, sum=1.5, min=0.004, max=0.9,
                                        explicit_bounds=[0.005, 0.1, 0.5],
                                        bucket_counts=[1, 3, 1, 1])
    hp.attributes.extend(kv(http_request_method="GET", http_route="/pay",
                            http_response_status_code=200))

    exp = sm.metrics.add(name="rpc.server.duration", unit="ms")
    exp.exponential_histogram.aggregation_temporality = DELTA
    ep = exp.exponential_histogram.data_points.add(
        start_time_unix_nano=start, time_unix_nano=t, count=5, sum=40.0, scale=3,
        zero_count=1, min=0.0, max=20.0)
    ep.positive.offset = 10
    ep.positive.bucket_counts.extend([1, 0, 3])

    summary = sm.metrics.add(name="legacy.latency", unit="ms")
    qp = summary.summary.data_points.add(start_time_unix_nano=start, time_unix_nano=t,
                                         count=10, sum=55.0)
    qp.quantile_values.add(quantile=0.5, value=4.0)
    qp.quantile_values.add(quantile=0.99, value=20.0)
    return request
