"""Real OTLP clients against the real collector: the Python SDK's HTTP and gRPC
exporters configured by environment only, the JavaScript SDK's HTTP (JSON)
exporter, and requests shaped like the Collector's `otlphttp` and `otlp`
exporters. Each test reads the stored spans back and compares them whole with
what the client sent."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest
import requests
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from model.fingerprint import fingerprint
from tests.receiver.otlp_helpers import assert_stored_as_sent, collector_request, random_trace_id
from tests.support import clients
from tests.support.server import Projects, Server

pytestmark = pytest.mark.clients(clients.OPENTELEMETRY_PYTHON, clients.OPENTELEMETRY_JS)

HERE = Path(__file__).resolve().parent
JS_DIR = clients.js_dir()
COLLECTOR_AGENT = "OpenTelemetry Collector Contrib/0.116.0 (linux/amd64)"


def _client_env(**otel: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(otel)
    return env


def run_python_sdk(protocol: str, **otel: str) -> list[dict[str, Any]]:
    """Run tests/receiver/otlp_sdk_client.py with exactly `otel` as OTEL_* settings."""
    python = clients.python(clients.OPENTELEMETRY_PYTHON)
    done = subprocess.run([python, "-P", str(HERE / "otlp_sdk_client.py"), protocol],
                          env=_client_env(**otel), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["result"] == "SUCCESS", done.stderr
    return list(report["spans"])


def run_js_sdk(**otel: str) -> list[dict[str, Any]]:
    if shutil.which("node") is None:
        pytest.fail("node is required: `make test-deps` installs the JavaScript client")
    if not (JS_DIR / "node_modules" / "@opentelemetry" / "exporter-trace-otlp-http").is_dir():
        pytest.fail("tests/js is not installed: run `make test-deps` (npm ci in tests/js)")
    done = subprocess.run(["node", str(JS_DIR / "send_traces.js")], env=_client_env(**otel),
                          capture_output=True, text=True, timeout=120, cwd=JS_DIR)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["result"] == "SUCCESS", done.stderr
    spans = list(report["spans"])
    for span in spans:  # printed as strings: nanoseconds do not fit a JavaScript number
        span["start_ns"], span["end_ns"] = int(span["start_ns"]), int(span["end_ns"])
    return spans


@pytest.fixture
def server(module_projects: Projects) -> Server:
    """The module's collector (SQLite, then PostgreSQL), as a project of this test's own
    sees it."""
    return module_projects.take()


def key_header(server: Server) -> str:
    # OTEL_EXPORTER_OTLP_HEADERS values are URL-encoded, hence %20.
    return f"Authorization=Bearer%20{server.key}"


def assert_exception_became_an_error(server: Server, spans: list[dict[str, Any]]) -> None:
    """The SDK's recorded exception is an error record linked to its trace and span."""
    (span,) = [s for s in spans if any(e["name"] == "exception" for e in s["events"])]
    (event,) = [e for e in span["events"] if e["name"] == "exception"]
    attributes = event["attributes"]
    (row,) = server.query("SELECT * FROM error_events WHERE trace_id = :t", t=span["trace_id"])
    assert (row.trace_id, row.span_id) == (span["trace_id"], span["span_id"])
    assert row.exception_class == attributes["exception.type"]
    assert row.message == attributes["exception.message"]
    assert row.fingerprint == fingerprint(attributes["exception.type"],
                                          attributes["exception.stacktrace"],
                                          attributes["exception.message"])
    (group,) = server.query("SELECT count FROM error_groups WHERE fingerprint = :f "
                            "AND project_id = :p", f=row.fingerprint, p=row.project_id)
    assert group.count == 1


def test_python_http_exporter_via_otlp_endpoint(server: Server) -> None:
    # OTEL_EXPORTER_OTLP_ENDPOINT is a base: the exporter appends /v1/traces.
    spans = run_python_sdk("http", OTEL_EXPORTER_OTLP_ENDPOINT=f"{server.base}/ingest",
                           OTEL_EXPORTER_OTLP_HEADERS=key_header(server))
    assert len(spans) == 5
    assert_stored_as_sent(server, spans)
    assert_exception_became_an_error(server, spans)


def test_python_http_exporter_at_the_traces_endpoint_with_gzip(sqlite_server: Server) -> None:
    spans = run_python_sdk(
        "http", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{sqlite_server.base}/ingest/v1/traces",
        OTEL_EXPORTER_OTLP_COMPRESSION="gzip", OTEL_EXPORTER_OTLP_HEADERS=key_header(sqlite_server))
    assert_stored_as_sent(sqlite_server, spans)


def test_python_http_exporter_at_the_standard_otlp_port(start: Any, sqlite_url: str) -> None:
    # The optional 4318-style listener serves /v1/traces, so the SDK's default path works.
    server = start(sqlite_url, env={"SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true"},
                   wait_for=2)
    otlp_base = server.urls[1]
    spans = run_python_sdk("http", OTEL_EXPORTER_OTLP_ENDPOINT=otlp_base,
                           OTEL_EXPORTER_OTLP_HEADERS=key_header(server))
    assert_stored_as_sent(server, spans)
    assert requests.post(f"{otlp_base}/v1/traces", data=b"", timeout=10,
                         headers={"Content-Type": "application/x-protobuf"}).status_code == 401


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_python_grpc_exporter(sqlite_server: Server, compression: str | None) -> None:
    # This exporter knows only "gzip"; without the variable it does not compress.
    gzip_env = {"OTEL_EXPORTER_OTLP_COMPRESSION": compression} if compression else {}
    spans = run_python_sdk(
        "grpc", OTEL_EXPORTER_OTLP_ENDPOINT=f"http://{sqlite_server.grpc_target}",
        OTEL_EXPORTER_OTLP_INSECURE="true", OTEL_EXPORTER_OTLP_HEADERS=key_header(sqlite_server),
        **gzip_env)
    assert_stored_as_sent(sqlite_server, spans)
    assert_exception_became_an_error(sqlite_server, spans)


def test_javascript_http_json_exporter(server: Server) -> None:
    spans = run_js_sdk(OTEL_EXPORTER_OTLP_ENDPOINT=f"{server.base}/ingest",
                       OTEL_EXPORTER_OTLP_HEADERS=key_header(server))
    assert len(spans) == 5
    assert_stored_as_sent(server, spans)
    assert_exception_became_an_error(server, spans)


def test_request_shaped_like_the_collector_otlphttp_exporter(server: Server) -> None:
    trace_id = random_trace_id()
    request, sent = collector_request(trace_id)
    # What its exporter sends: protobuf, gzip (its default), its User-Agent, and the
    # headers configured under `headers:`.
    response = requests.post(f"{server.base}/ingest/v1/traces",
                             data=gzip.compress(request.SerializeToString()), timeout=30,
                             headers={"Content-Type": "application/x-protobuf",
                                      "Content-Encoding": "gzip", "Accept-Encoding": "gzip",
                                      "User-Agent": COLLECTOR_AGENT,
                                      "Authorization": f"Bearer {server.key}"})
    assert response.status_code == 202, response.text
    assert response.content == b""
    assert len(sent) == 20
    assert_stored_as_sent(server, sent)


def test_request_shaped_like_the_collector_otlp_grpc_exporter(server: Server) -> None:
    trace_id = random_trace_id()
    request, sent = collector_request(trace_id)
    with grpc.insecure_channel(server.grpc_target,
                               options=[("grpc.primary_user_agent", COLLECTOR_AGENT)]) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        response = stub.Export(request, compression=grpc.Compression.Gzip, timeout=30,
                               metadata=(("authorization", f"Bearer {server.key}"),))
    assert response == trace_service_pb2.ExportTraceServiceResponse()
    assert_stored_as_sent(server, sent)
