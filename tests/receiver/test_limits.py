"""Rate limits and quotas per project, at every door of the real server: each door
refuses in its own protocol (429 + Retry-After; gRPC RESOURCE_EXHAUSTED with RetryInfo;
Sentry's X-Sentry-Rate-Limits naming the categories), another project is not
touched, a request is refused before its body once its category is closed, and what
was accepted and refused is counted per project in usage_hourly, on both stores.
The collector is one per module and store (`limited`), each test's limits those of a
project of its own (LIMITS): limits, buckets and usage are all per project."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import requests
from google.protobuf.json_format import ParseDict
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from proto.sounding.v1 import ingest_pb2, ingest_pb2_grpc
from tests.receiver.otlp_helpers import random_trace_id, request_of, rpc_error, span_pb, trailer
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import post_envelope, project_id
from tests.receiver.sentry.telemetry_items import (
    LOG_HEADERS,
    METRIC_HEADERS,
    PYTHON_LOGS,
    PYTHON_METRICS,
)
from tests.support.server import Server, collectors

ERROR = {"exception_class": "KeyError", "message": "'k'", "backtrace": ["app.py:1 in f"],
         "fingerprint": "limits-test"}
# Slow enough that nothing refills during a test: a burst, then refusals.
SLOW = "{rate: 0.01, burst: %d}"


def config(tmp_path: Path, limits: str, extra: str = "") -> str:
    path = tmp_path / "limits.yaml"
    path.write_text(f"""
auth:
  limits:
    usage_flush_seconds: 0.3
    projects:
      acme:
{limits}
{extra}
""")
    return str(path)


# Each test's project and its limits; "other" has none.
LIMITS = {
    "rates": "error: " + SLOW % 2,
    "spans": "span: " + SLOW % 3,
    "quota": "error: {quota: 3, period: day}",
    "bytes": "bytes: " + SLOW % 200,
    "usage": "span: {rate: 1000}",
    "logs": "log: " + SLOW % 2,
    "metrics": "metric: " + SLOW % 3,
}
# Keys of 32 hex digits, as a Sentry DSN's.
KEYS = {name: f"{n + 1:032x}" for n, name in enumerate([*LIMITS, "other"])}


@pytest.fixture(scope="module")
def limited(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Server]:
    """One collector per module and store with every project of LIMITS limited."""
    folder = tmp_path_factory.mktemp("limits")
    path = folder / "limits.yaml"
    projects = "".join(f"      {name}:\n        {limits}\n" for name, limits in LIMITS.items())
    path.write_text(f"auth:\n  limits:\n    usage_flush_seconds: 0.3\n    projects:\n"
                    f"{projects}")
    with collectors(folder) as start:
        yield start(module_db_url, keys=KEYS, config=str(path))


def post_error(server: Server, key: str | None = None) -> requests.Response:
    return requests.post(server.base + "/ingest/errors", json=ERROR, timeout=30,
                         headers={"Authorization": f"Bearer {key or server.key}"})


def sentry(server: Server, body: bytes) -> requests.Response:
    """An envelope posted to the server's project with its key."""
    return post_envelope(server, body, key=server.key, project=server.project_id())


def usage(server: Server, name: str | None = None) -> dict[tuple[str, str], tuple[int, int]]:
    """{(category, outcome): (records, requests)} of a project, once flushed."""
    rows = server.query("SELECT category, outcome, SUM(records), SUM(requests) FROM "
                        "usage_hourly WHERE project_id = :p GROUP BY category, outcome",
                        p=project_id(server, name or server.project))
    return {(r[0], r[1]): (int(r[2]), int(r[3])) for r in rows}


def wait_usage(server: Server, expect: Callable[[dict[Any, Any]], bool],
               name: str | None = None) -> dict[tuple[str, str], tuple[int, int]]:
    deadline = time.monotonic() + 10
    while True:
        found = usage(server, name)
        if expect(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_the_custom_sentry_and_grpc_doors_each_refuse_in_their_protocol(
        limited: Server) -> None:
    server = limited.for_project("rates")
    assert [post_error(server).status_code for _ in range(2)] == [202, 202]
    refused = post_error(server)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 200
    assert "over its rate limit for error" in refused.json()["error"]
    assert post_error(server).status_code == 429  # now from the key alone, before the body

    event = envelope({"event_id": "a" * 32}, [item("event", {"message": "hi"})])
    refused = sentry(server, event)
    assert refused.status_code == 429
    seconds, categories, scope, reason = refused.headers["X-Sentry-Rate-Limits"].split(":")
    assert seconds == refused.headers["Retry-After"]
    assert categories.split(";") == ["error", "default", "security"]
    assert (scope, reason) == ("project", "rate_limited")

    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = ingest_pb2_grpc.ErrorServiceStub(channel)
        record = ParseDict(ERROR, ingest_pb2.ErrorRecord())
        error = rpc_error(lambda: stub.Report(
            record, metadata=(("authorization", f"Bearer {server.key}"),)))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    alone = error_details_pb2.RetryInfo.FromString(trailer(error, "google.rpc.retryinfo-bin"))
    assert alone.retry_delay.seconds >= 1
    details = status_pb2.Status.FromString(trailer(error, "grpc-status-details-bin")).details
    inside = error_details_pb2.RetryInfo()
    assert details[0].Unpack(inside) and inside == alone

    # Another project is not touched, and the limited one's other categories neither.
    assert [post_error(server, KEYS["other"]).status_code for _ in range(5)] == [202] * 5
    transaction = envelope({"event_id": "b" * 32}, [item("transaction", {
        "type": "transaction", "transaction": "GET /", "start_timestamp": time.time() - 1,
        "timestamp": time.time(), "contexts": {"trace": {
            "trace_id": random_trace_id(), "span_id": "00f067aa0ba902b7", "op": "http"}}})])
    assert sentry(server, transaction).status_code == 200

    found = wait_usage(server, lambda u: u.get(("span", "accepted"), (0, 0))[0] >= 1
                       and ("error", "rate_limited") in u)
    assert found[("error", "accepted")][0] == 2
    # The Sentry envelope's refusal (its door carries other categories too) was decided
    # on its record; the others before their body was read, from the key alone (the
    # bucket was seen empty when the second error took its last token): requests of no
    # known records.
    assert found[("error", "rate_limited")] == (1, 3)
    assert wait_usage(server, lambda u: ("error", "accepted") in u, "other")[
        ("error", "accepted")] == (5, 0)


def test_otlp_spans_over_http_and_grpc_are_refused_past_the_burst(limited: Server) -> None:
    server = limited.for_project("spans")
    three = request_of(*(span_pb(random_trace_id(), f"{i:016x}") for i in range(1, 4)))
    body = three.SerializeToString()
    headers = {"Authorization": f"Bearer {server.key}", "Content-Type": "application/x-protobuf"}
    first = requests.post(server.base + "/ingest/v1/traces", data=body, headers=headers,
                          timeout=30)
    assert first.status_code == 202
    over = requests.post(server.base + "/ingest/v1/traces", data=body, headers=headers,
                         timeout=30)
    assert over.status_code == 429 and int(over.headers["Retry-After"]) >= 1
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        error = rpc_error(lambda: stub.Export(
            trace_service_pb2.ExportTraceServiceRequest.FromString(body),
            metadata=(("authorization", f"Bearer {server.key}"),)))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert server.project_rows("spans", "COUNT(*)")[0][0] == 3


def test_sentry_logs_and_metrics_are_limited_as_log_item_and_trace_metric(
        limited: Server) -> None:
    """A project over its log limit is answered 429 naming log_item, over its metric
    limit naming trace_metric, as an envelope of errors and spans is refused naming
    the category that is over: the whole envelope, its other records counted with it;
    an envelope without logs still goes in."""
    logs = limited.for_project("logs")
    two_logs = item("log", PYTHON_LOGS, item_count=2, **LOG_HEADERS)
    error = item("event", {"message": "hi", "level": "error"})
    assert sentry(logs, envelope({}, [two_logs])).status_code == 200
    refused = sentry(logs, envelope({}, [two_logs, error]))
    assert refused.status_code == 429
    seconds, categories, scope, reason = refused.headers["X-Sentry-Rate-Limits"].split(":")
    assert (categories, scope, reason) == ("log_item", "project", "rate_limited")
    assert seconds == refused.headers["Retry-After"]
    assert sentry(logs, envelope({}, [error])).status_code == 200
    found = wait_usage(logs, lambda u: ("log", "rate_limited") in u
                       and ("error", "accepted") in u)
    assert found[("log", "accepted")] == (2, 0)
    assert found[("log", "rate_limited")][0] == 2
    assert found[("error", "rate_limited")][0] == 1

    metrics = limited.for_project("metrics")
    three = item("trace_metric", PYTHON_METRICS, item_count=3, **METRIC_HEADERS)
    assert sentry(metrics, envelope({}, [three])).status_code == 200
    refused = sentry(metrics, envelope({}, [three]))
    assert refused.status_code == 429
    assert refused.headers["X-Sentry-Rate-Limits"].split(":")[1] == "trace_metric"
    assert len(metrics.project_rows("metric_points", "time_ns")) == 3


def test_a_quota_refuses_until_the_period_ends_and_counts_over_quota(limited: Server) -> None:
    server = limited.for_project("quota")
    assert [post_error(server).status_code for _ in range(3)] == [202] * 3
    refused = post_error(server)
    assert refused.status_code == 429
    now = time.time()
    until_midnight = 86400 - now % 86400
    assert abs(int(refused.headers["Retry-After"]) - until_midnight) < 5
    assert "quota" in refused.json()["error"]
    found = wait_usage(server, lambda u: ("error", "over_quota") in u)
    assert found[("error", "accepted")] == (3, 0)
    assert sum(found[("error", "over_quota")]) == 1


def test_a_bytes_limit_refuses_every_category_of_the_project(limited: Server) -> None:
    server = limited.for_project("bytes")
    assert post_error(server).status_code == 202  # about 100 bytes: into debt
    assert post_error(server).status_code == 202
    refused = post_error(server)
    assert refused.status_code == 429
    event = envelope({"event_id": "c" * 32}, [item("event", {"message": "hi"})])
    refused = sentry(server, event)
    assert refused.status_code == 429
    # No category named: an SDK stops sending everything.
    assert refused.headers["X-Sentry-Rate-Limits"].split(":")[1] == ""


@pytest.mark.parametrize("bad, message", [
    ("        error: {rate: -1}", "auth.limits.projects.acme.error.rate must be a number"),
    ("        errors: {rate: 1}", "unknown category 'errors'"),
    ("        error: {rate: 1, period: week}", "period must be one of day, month"),
])
def test_a_bad_limit_stops_the_collector_naming_it(tmp_path: Path, sqlite_url: str,
                                                   bad: str, message: str) -> None:
    path = config(tmp_path, bad)
    result = subprocess.run(
        [sys.executable, "-m", "sounding", "--config", path, "check-config"],
        capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[2],
        env={"SOUNDING_DATABASE_URL": sqlite_url, "PATH": "/usr/bin"})
    assert result.returncode != 0
    assert message in result.stdout + result.stderr


def test_usage_counts_invalid_records_apart_from_accepted_ones(limited: Server) -> None:
    server = limited.for_project("usage")
    batch = {"errors": [ERROR, {**ERROR, "backtrace": None}, ERROR]}
    answer = requests.post(server.base + "/ingest/errors/batch", json=batch, timeout=30,
                           headers={"Authorization": f"Bearer {server.key}"})
    assert answer.status_code == 202 and answer.json()["rejected"] == 1
    good, bad = span_pb(random_trace_id(), "00000000000000aa"), span_pb("00", "01")
    headers = {"Authorization": f"Bearer {server.key}", "Content-Type": "application/x-protobuf"}
    assert requests.post(server.base + "/ingest/v1/traces", headers=headers, timeout=30,
                         data=request_of(good, bad).SerializeToString()).status_code == 202
    found = wait_usage(server, lambda u: ("span", "invalid") in u
                       and ("error", "invalid") in u)
    assert found[("error", "accepted")] == (2, 0)
    assert found[("error", "invalid")] == (1, 0)
    assert found[("span", "accepted")] == (1, 0)
    assert found[("span", "invalid")] == (1, 0)
