"""Real OTLP log clients against the real collector: the Python SDK's logs pipeline
(logging -> LoggingHandler -> LoggerProvider -> BatchLogRecordProcessor ->
OTLPLogExporter) over HTTP protobuf and over gRPC with gzip, configured by
OTEL_EXPORTER_OTLP_* alone; the JavaScript SDK's OTLP/HTTP JSON log exporter; and a
request shaped like the Collector's `otlphttp` exporter. Each test reads every
stored record back and compares it whole with what the client sent."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from typing import Any

import pytest
import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from tests.receiver.logs_helpers import stored_logs
from tests.receiver.otlp_helpers import EVERY_KIND, attributes_pb, random_trace_id
from tests.receiver.test_otlp_clients import (
    COLLECTOR_AGENT,
    HERE,
    JS_DIR,
    _client_env,
    key_header,
)
from tests.support import clients
from tests.support.server import Projects, Server

pytestmark = pytest.mark.clients(clients.OPENTELEMETRY_PYTHON, clients.OPENTELEMETRY_JS)


def run_python_sdk(protocol: str, **otel: str) -> list[dict[str, Any]]:
    """Run tests/receiver/otlp_sdk_logs_client.py with exactly `otel` as OTEL_* settings."""
    python = clients.python(clients.OPENTELEMETRY_PYTHON)
    done = subprocess.run([python, "-P", str(HERE / "otlp_sdk_logs_client.py"), protocol],
                          env=_client_env(**otel), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["results"] == ["SUCCESS"], done.stderr
    return list(report["logs"])


def run_js_sdk(**otel: str) -> list[dict[str, Any]]:
    if shutil.which("node") is None:
        pytest.fail("node is required: `make test-deps` installs the JavaScript client")
    if not (JS_DIR / "node_modules" / "@opentelemetry" / "exporter-logs-otlp-http").is_dir():
        pytest.fail("tests/js is not installed: run `make test-deps` (npm ci in tests/js)")
    done = subprocess.run(["node", str(JS_DIR / "send_logs.js")], env=_client_env(**otel),
                          capture_output=True, text=True, timeout=120, cwd=JS_DIR)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["result"] == "SUCCESS", done.stderr
    logs = list(report["logs"])
    for record in logs:  # printed as strings: nanoseconds do not fit a JavaScript number
        record["time_ns"], record["observed_ns"] = (int(record["time_ns"]),
                                                    int(record["observed_ns"]))
    return logs


def _order(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True)


def assert_logs_stored_as_sent(server: Server, sent: list[dict[str, Any]]) -> None:
    """Every record the client sent is stored with every field as sent, and nothing else."""
    assert sent, "the client sent no record"
    stored = stored_logs(server, project=server.project_id())
    assert all(record.pop("unreadable") == [] for record in stored)
    ids = {record.pop("id") for record in stored}
    assert len(ids) == len(stored)
    assert sorted(stored, key=_order) == sorted(sent, key=_order)


@pytest.fixture
def server(module_projects: Projects) -> Server:
    """The module's collector (SQLite, then PostgreSQL), as a project of this test's own
    sees it."""
    return module_projects.take()


def test_python_sdk_logs_over_http_protobuf(server: Server) -> None:
    # OTEL_EXPORTER_OTLP_ENDPOINT is a base: the exporter appends /v1/logs.
    sent = run_python_sdk("http", OTEL_EXPORTER_OTLP_ENDPOINT=f"{server.base}/ingest",
                          OTEL_EXPORTER_OTLP_HEADERS=key_header(server))
    assert len(sent) == 4
    assert_logs_stored_as_sent(server, sent)
    (in_span,) = [r for r in sent if r["trace_id"]]
    assert in_span["body"] == "order 42 placed" and in_span["attributes"]["order.id"] == 42


def test_python_sdk_logs_over_grpc_with_gzip(server: Server) -> None:
    sent = run_python_sdk(
        "grpc", OTEL_EXPORTER_OTLP_ENDPOINT=f"http://{server.grpc_target}",
        OTEL_EXPORTER_OTLP_INSECURE="true", OTEL_EXPORTER_OTLP_COMPRESSION="gzip",
        OTEL_EXPORTER_OTLP_HEADERS=key_header(server))
    assert_logs_stored_as_sent(server, sent)


def test_python_sdk_logs_at_the_logs_endpoint_of_the_standard_port(start: Any,
                                                                   sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true"},
                   wait_for=2)
    sent = run_python_sdk("http", OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=f"{server.urls[1]}/v1/logs",
                          OTEL_EXPORTER_OTLP_COMPRESSION="gzip",
                          OTEL_EXPORTER_OTLP_HEADERS=key_header(server))
    assert_logs_stored_as_sent(server, sent)


def test_javascript_http_json_log_exporter(server: Server) -> None:
    sent = run_js_sdk(OTEL_EXPORTER_OTLP_ENDPOINT=f"{server.base}/ingest",
                      OTEL_EXPORTER_OTLP_HEADERS=key_header(server))
    assert len(sent) == 3
    assert_logs_stored_as_sent(server, sent)


def collector_logs_request(trace_id: str, base_ns: int = 1_795_168_800_000_000_000
                           ) -> tuple[ExportLogsServiceRequest, list[dict[str, Any]]]:
    """What a Collector forwards: two resources, several scopes, every severity band,
    every AnyValue kind as body and attribute, records in and out of a trace."""
    request = ExportLogsServiceRequest()
    sent: list[dict[str, Any]] = []
    resources = [
        {"service.name": AnyValue(string_value="checkout"),
         "k8s.pod.name": AnyValue(string_value="checkout-7d9f")},
        {"service.name": AnyValue(string_value="billing"),
         "deployment.environment.name": AnyValue(string_value="prod")},
    ]
    number = 0
    for r_index, resource in enumerate(resources):
        resource_logs = request.resource_logs.add()
        resource_logs.resource.attributes.extend(attributes_pb(resource))
        for scope in (f"scope-{r_index}-a", f"scope-{r_index}-b"):
            scope_logs = resource_logs.scope_logs.add()
            scope_logs.scope.name = scope
            scope_logs.scope.version = "1.0"
            for body_key, (body, body_stored) in EVERY_KIND.items():
                number += 1
                severity = 1 + number % 24
                in_trace = number % 2 == 0
                record = scope_logs.log_records.add(
                    time_unix_nano=base_ns + number * 1_000_123,
                    observed_time_unix_nano=base_ns + number * 1_000_123 + 5,
                    severity_number=severity,  # type: ignore[arg-type]
                    severity_text=f"S{severity}", flags=1 if in_trace else 0,
                    trace_id=bytes.fromhex(trace_id) if in_trace else b"",
                    span_id=number.to_bytes(8, "big") if in_trace else b"",
                    dropped_attributes_count=number % 3, event_name=f"ev.{body_key}")
                record.body.CopyFrom(body)
                record.attributes.extend(attributes_pb({k: v for k, (v, _) in
                                                        EVERY_KIND.items()}))
                record.attributes.append(KeyValue(key="n", value=AnyValue(int_value=number)))
                stored_resource = {k: v.string_value for k, v in resource.items()}
                sent.append({
                    "time_ns": record.time_unix_nano,
                    "observed_ns": record.observed_time_unix_nano,
                    "severity_number": severity, "severity_text": f"S{severity}",
                    "body": body_stored,
                    "attributes": {**{k: s for k, (_, s) in EVERY_KIND.items()}, "n": number},
                    "resource": stored_resource,
                    "service_name": stored_resource["service.name"], "scope_name": scope,
                    "trace_id": trace_id if in_trace else "",
                    "span_id": record.span_id.hex(), "flags": record.flags,
                    "event_name": record.event_name,
                    "dropped_attributes_count": number % 3,
                })
    return request, sent


def test_request_shaped_like_the_collector_otlphttp_exporter(server: Server) -> None:
    request, sent = collector_logs_request(random_trace_id())
    # What its exporter sends: protobuf, gzip (its default), its User-Agent, and the
    # headers configured under `headers:`.
    response = requests.post(f"{server.base}/ingest/v1/logs",
                             data=gzip.compress(request.SerializeToString()), timeout=30,
                             headers={"Content-Type": "application/x-protobuf",
                                      "Content-Encoding": "gzip", "Accept-Encoding": "gzip",
                                      "User-Agent": COLLECTOR_AGENT,
                                      "Authorization": f"Bearer {server.key}"})
    assert response.status_code == 202, response.text
    assert response.content == b""
    assert len(sent) == 4 * len(EVERY_KIND)
    assert_logs_stored_as_sent(server, sent)
