"""OTLP metrics through every door of the real server: a Collector-shaped protobuf
request (gzip) with every kind of point stored, OTLP/JSON on the OTLP/HTTP port,
HTTP and gRPC with partial success, a body that is not OTLP, and exemplars: kept as
the link from a metric to its trace, a few per series and minute."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
import requests
from opentelemetry.proto.collector.metrics.v1 import (
    metrics_service_pb2,
    metrics_service_pb2_grpc,
)

from storage.rows import MAX_EXEMPLARS
from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.metrics_helpers import T0, S, collector_request, kv
from tests.receiver.otlp_helpers import grpc_auth, rpc_error
from tests.support.server import Server, start_server


@pytest.fixture(scope="module")
def otlp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("metrics") / "sounding.db"
    server = start_server(f"sqlite:///{path}", wait_for=2,
                          env={"SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true"})
    yield server
    assert server.stop() == 0, server.log()
    assert "Traceback" not in server.log(), server.log()


def post(url: str, server: Server, body: bytes, content_type: str, **headers: str
         ) -> requests.Response:
    return requests.post(url, data=body, timeout=30, headers={
        "Authorization": f"Bearer {server.key}", "Content-Type": content_type, **headers})


def stored(server: Server, time_s: int) -> dict[str, tuple[object, ...]]:
    rows = server.query(
        "SELECT s.name, s.kind, s.points, s.service_name, p.value, p.count "
        "FROM metric_points p JOIN metric_series s ON s.project_id = p.project_id "
        "AND s.series_key = p.series_key WHERE p.time_ns = :t", t=T0 + time_s * S)
    return {r[0]: tuple(r[1:]) for r in rows}


def test_a_collector_request_gzip_stores_every_kind(otlp: Server) -> None:
    body = gzip.compress(collector_request(60).SerializeToString())
    response = post(otlp.base + "/ingest/v1/metrics", otlp, body, "application/x-protobuf",
                    **{"Content-Encoding": "gzip"})
    assert response.status_code == 202, response.text
    assert stored(otlp, 60) == {
        "system.memory.utilization": ("gauge", "value", "checkout", 0.42, 0),
        "system.network.io": ("sum", "delta", "checkout", 1234.0, 0),
        "http.server.request.duration": ("histogram", "delta", "checkout", None, 6),
        "rpc.server.duration": ("exponential_histogram", "delta", "checkout", None, 5),
        "legacy.latency": ("summary", "value", "checkout", None, 10),
    }
    rollups = otlp.query("SELECT service, env, method, route, count FROM "
                         "metric_request_rollups")
    assert [tuple(r) for r in rollups] == [("checkout", "prod", "GET", "/pay", 6)]


def test_otlp_json_on_the_otlp_port(otlp: Server) -> None:
    body = json.dumps({"resourceMetrics": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "js"}}]},
        "scopeMetrics": [{"metrics": [{"name": "queue.depth", "gauge": {"dataPoints": [
            {"asInt": "17", "timeUnixNano": str(T0 + 70 * S)}]}}]}]}]}).encode()
    response = post(otlp.urls[1] + "/v1/metrics", otlp, body, "application/json")
    assert response.status_code == 202, response.text
    assert stored(otlp, 70) == {"queue.depth": ("gauge", "value", "js", 17.0, 0)}


def test_grpc_with_a_bad_point_answers_partial_success(otlp: Server) -> None:
    request = collector_request(80)
    request.resource_metrics[0].scope_metrics[0].metrics[3].exponential_histogram \
        .data_points[0].scale = 99
    with grpc.insecure_channel(otlp.grpc_target) as channel:
        stub = metrics_service_pb2_grpc.MetricsServiceStub(channel)
        reply: metrics_service_pb2.ExportMetricsServiceResponse = stub.Export(
            request, metadata=grpc_auth(otlp), compression=grpc.Compression.Gzip)
    assert reply.partial_success.rejected_data_points == 1
    assert "scale" in reply.partial_success.error_message
    assert len(stored(otlp, 80)) == 4


def test_http_with_a_bad_point_answers_partial_success_in_the_202(otlp: Server) -> None:
    request = collector_request(90)
    request.resource_metrics[0].scope_metrics[0].metrics[3].exponential_histogram \
        .data_points[0].scale = 99
    response = post(otlp.base + "/ingest/v1/metrics", otlp, request.SerializeToString(),
                    "application/x-protobuf")
    assert response.status_code == 202, response.text
    assert response.headers["Content-Type"].startswith("application/x-protobuf")
    reply = metrics_service_pb2.ExportMetricsServiceResponse.FromString(response.content)
    assert reply.partial_success.rejected_data_points == 1
    assert "scale" in reply.partial_success.error_message
    assert len(stored(otlp, 90)) == 4


def test_a_body_that_is_not_otlp_is_a_400_and_every_point_bad_too(otlp: Server) -> None:
    response = post(otlp.base + "/ingest/v1/metrics", otlp, b"\xff\xff", "application/x-protobuf")
    assert response.status_code == 400
    bad = json.dumps({"resourceMetrics": [{"scopeMetrics": [{"metrics": [{
        "name": "n", "gauge": {"dataPoints": [{"asInt": 1}]}}]}]}]}).encode()
    response = post(otlp.base + "/ingest/v1/metrics", otlp, bad, "application/json")
    assert response.status_code == 400
    assert "timeUnixNano" in response.text
    with grpc.insecure_channel(otlp.grpc_target) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export")
        error = rpc_error(lambda: export(b"\xff\xff\xff", metadata=grpc_auth(otlp)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]


def test_small_bodies_decoded_on_the_event_loop_store_the_same(
        start: Callable[..., Server], sqlite_url: str) -> None:
    # The module's server sends every body to a decode worker; this one decodes
    # on the event loop (bodies below decode_min_bytes), as small requests are.
    server = start(sqlite_url, env={"SOUNDING__SERVICE__DECODE_MIN_BYTES": "100000000"})
    request = collector_request(60)
    request.resource_metrics[0].scope_metrics[0].metrics[0].gauge.data_points[0] \
        .time_unix_nano = 0  # dropped alone
    response = post(server.base + "/ingest/v1/metrics", server, request.SerializeToString(),
                    "application/x-protobuf")
    assert response.status_code == 202, response.text
    assert set(stored(server, 60)) == {"system.network.io", "http.server.request.duration",
                                       "rpc.server.duration", "legacy.latency"}


def _traced_gauge(time_ns: int, traces: range) -> bytes:
    """One gauge point carrying an exemplar of each trace in `traces` (trace ids
    whose last byte is the number, span ids alike)."""
    request = metrics_service_pb2.ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    rm.resource.attributes.extend(kv(service_name="checkout"))
    metric = rm.scope_metrics.add().metrics.add(name="queue.depth", unit="item")
    point = metric.gauge.data_points.add(time_unix_nano=time_ns, as_int=7)
    for n in traces:
        point.exemplars.add(time_unix_nano=time_ns, as_double=n + 0.5,
                            trace_id=bytes(15) + bytes([n]), span_id=bytes(7) + bytes([n]))
    return request.SerializeToString()


def _metric_api(server: Server, name: str, **params: str) -> dict[str, Any]:
    response = requests.get(f"{server.base}/api/v1/projects/{server.project}/metrics/{name}",
                            params=params, timeout=10,
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_an_exemplar_leads_from_the_metric_to_its_trace(
        start: Callable[..., Server], db_url: str) -> None:
    server = start(db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    now_ns = time.time_ns() // S * S - 120 * S
    response = post(server.base + "/ingest/v1/metrics", server, _traced_gauge(now_ns, range(1, 2)),
                    "application/x-protobuf")
    assert response.status_code == 202, response.text
    answer = _metric_api(server, "queue.depth", range="1h")
    assert answer["exemplars"] == [{"time_ns": now_ns, "value": 1.5,
                                    "trace_id": "00" * 15 + "01", "span_id": "00" * 7 + "01",
                                    "group": None}]


def test_exemplars_are_bounded_per_series_and_minute(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    minute_ns = (time.time_ns() // (60 * S) - 5) * 60 * S
    # 40 exemplars in one point, 40 more in the next point of the same minute, sent twice.
    second = _traced_gauge(minute_ns + S, range(41, 81))
    for body in (_traced_gauge(minute_ns, range(1, 41)), second, second):
        response = post(server.base + "/ingest/v1/metrics", server, body,
                        "application/x-protobuf")
        assert response.status_code == 202, response.text
    # And one in the next minute, which has slots of its own.
    post(server.base + "/ingest/v1/metrics", server, _traced_gauge(minute_ns + 60 * S, range(1, 2)),
         "application/x-protobuf")
    per_minute = server.query("SELECT minute, count(*), count(DISTINCT slot) FROM "
                              "metric_exemplars GROUP BY minute ORDER BY minute")
    assert [tuple(r) for r in per_minute] == [
        (minute_ns // S, MAX_EXEMPLARS, MAX_EXEMPLARS), (minute_ns // S + 60, 1, 1)]
    # The first exemplar of each slot is kept: all from the first point.
    kept = server.query("SELECT value FROM metric_exemplars WHERE minute = :m", m=minute_ns // S)
    assert all(value < 41 for (value,) in kept)
    assert len(_metric_api(server, "queue.depth", range="1h")["exemplars"]) == MAX_EXEMPLARS + 1
