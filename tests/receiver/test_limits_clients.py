"""Real clients against a project over its rate limit: Python's sentry-sdk stops
sending the limited category (and reports what it dropped, which the collector
counts), and the OpenTelemetry Python exporter waits the Retry-After (HTTP) or the
RetryInfo (gRPC) it is given, then retries and is accepted."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.receiver.sentry.helpers import KEY, KEYS, dsn
from tests.receiver.test_limits import config, wait_usage
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2, clients.OPENTELEMETRY_PYTHON)

HERE = Path(__file__).parent


def run(client: str, module: str, *args: str) -> str:
    done = subprocess.run([clients.python(client), "-m", module, *args], capture_output=True,
                          text=True, timeout=120, cwd=HERE.parents[1])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_sentry_sdk_stops_sending_the_limited_category_only(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path) -> None:
    server = start(sqlite_url, keys=KEYS,
                   config=config(tmp_path, "        error: {rate: 0.01, burst: 2}"))
    out = json.loads(run(clients.SENTRY_SDK_2, "tests.receiver.sentry.sentry_sdk_limits_client",
                         dsn(server), "6"))
    # Sent: two accepted, the third refused with X-Sentry-Rate-Limits naming "error";
    # the other three never left the application. The transaction still went.
    assert "error" in out["disabled"] and "transaction" not in out["disabled"]
    assert "None" not in out["disabled"]  # a category's limit, not a global one
    found = wait_usage(server, lambda u: ("error", "client_discarded") in u
                       and ("span", "accepted") in u)
    assert found[("error", "accepted")] == (2, 0)
    assert found[("error", "rate_limited")] == (1, 0)
    assert found[("span", "accepted")][0] >= 1
    # The SDK's client report: what it dropped itself because of the limit.
    reasons = dict(server.query(
        "SELECT reason, SUM(records) FROM usage_hourly WHERE outcome = 'client_discarded' "
        "AND category = 'error' GROUP BY reason"))
    assert reasons.get("ratelimit_backoff") == 3


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_the_otel_exporter_retries_after_the_delay_it_is_given(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path, protocol: str) -> None:
    server = start(sqlite_url, keys=KEYS,
                   config=config(tmp_path, "        span: {rate: 5, burst: 5}"))
    endpoint = (f"http://{server.grpc_target}" if protocol == "grpc"
                else server.base + "/ingest/v1/traces")
    first, second = json.loads(run(clients.OPENTELEMETRY_PYTHON,
                                   "tests.receiver.otlp_sdk_limits_client", protocol,
                                   endpoint, KEY, "5"))
    assert first["result"] == second["result"] == "SUCCESS"
    # Refused once (bucket empty: a token again in 1/5 s, so Retry-After 1), retried
    # after the second it was told, and accepted.
    # (The first export's time includes starting a decode worker: not compared.)
    assert 0.8 <= second["seconds"] < 5
    assert server.query("SELECT COUNT(*) FROM spans")[0][0] == 10
    found = wait_usage(server, lambda u: ("span", "rate_limited") in u)
    # The second half, once, before its body: the bucket was seen empty.
    assert found[("span", "rate_limited")] == (0, 1)
