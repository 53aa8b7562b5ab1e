"""@sentry/node 11 from npm (tests/js/send_sentry_logs.js), unchanged but for its DSN,
with `enableLogs: true`: its logs (a `Sentry.logger.fmt` template with a parameter, a
plain warning) and its counter reach Sounding, linked to the span they were written
in, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from tests.receiver.sentry.e2e import api, start_with_api
from tests.receiver.sentry.helpers import dsn
from tests.receiver.sentry.test_sentry_node import JS_DIR
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_JAVASCRIPT)


def run_node_logs(server_dsn: str) -> dict[str, Any]:
    if shutil.which("node") is None or not (JS_DIR / "node_modules" / "@sentry").is_dir():
        pytest.fail("node and @sentry/node are required: run `make test-deps`")
    done = subprocess.run(["node", str(JS_DIR / "send_sentry_logs.js"), server_dsn],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_sentry_node_logs_and_metrics_reach_sounding(start: Callable[..., Server],
                                                     db_url: str) -> None:
    server = start_with_api(start, db_url)
    trace_id = run_node_logs(dsn(server))["trace_id"]
    logs = api(server, "/logs", trace_id=trace_id)["items"]
    assert sorted((r["body"], r["severity_number"]) for r in logs) == [
        ("order 42 shipped", 9), ("stock low", 13)]
    shipped = next(r for r in logs if r["body"] == "order 42 shipped")
    assert shipped["attributes"]["sentry.message.template"] == "order %s shipped"
    assert shipped["attributes"]["sentry.message.parameter.0"] == 42
    assert shipped["attributes"]["region"] == "eu"
    assert len(shipped["span_id"]) == 16  # from sentry.trace.parent_span_id
    assert shipped["resource"]["service.name"] == "unknown_service:node"
    assert shipped["resource"]["service.version"] == "shop-node@4.5.6"
    [(span_id,)] = [(bytes(r[0]).hex(),) for r in server.query(
        "SELECT span_id FROM spans WHERE name = 'POST /orders'")]
    assert shipped["span_id"] == span_id
    kinds = {m["name"]: m["kind"] for m in api(server, "/metrics")["metrics"]}
    assert kinds == {"orders.shipped": "sum"}
