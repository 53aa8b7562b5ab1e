"""End to end with the real OpenTelemetry Python SDK (tests/dashboard/sdk_logs_app.py,
a subprocess configured by OTEL_EXPORTER_OTLP_* alone): `logger.exception(...)` inside
a span becomes an error group linked to that trace and span, and the group leads to
the log record on the Logs page; the trace shows both records on their spans."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.OPENTELEMETRY_PYTHON)

HERE = Path(__file__).resolve().parent
API = "/api/v1/projects/acme"


def run_app(server: Server) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({"OTEL_EXPORTER_OTLP_ENDPOINT": f"{server.base}/ingest",
                # Values are URL-encoded, hence %20.
                "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{server.key}"})
    python = clients.python(clients.OPENTELEMETRY_PYTHON)
    done = subprocess.run([python, str(HERE / "sdk_logs_app.py")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # The SDK logs a failed export instead of raising: its stderr must be clean.
    assert "Failed to export" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    report: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def get(server: Server, path: str, **params: Any) -> Any:
    response = requests.get(server.base + path, params=params, timeout=10,
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 200, response.text
    return response.json()


def test_logger_exception_in_a_span_becomes_a_group_linked_to_its_trace_and_record(
        start: Callable[..., Server], db_url: str) -> None:
    server = start(db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    app = run_app(server)
    trace_id, span_id = app["trace_id"], app["span_id"]

    (item,) = [i for i in get(server, API + "/error-groups")["items"]
               if i["group"]["exception_class"] == "CardDeclined"]
    group = item["group"]
    assert group["count"] == 1  # reported once, by the log record alone
    event = get(server, f"{API}/error-groups/{group['id']}")["event"]
    assert (event["trace_id"], event["span_id"]) == (trace_id, span_id)
    assert event["message"] == "card 4242 declined"
    assert (event["service"], event["environment"], event["release"]) == (
        "sdk-shop", "staging", "3.1.4")
    assert event["log_time_ns"]

    # The group's page leads to the record: the Logs page at its trace and time.
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {ADMIN_TOKEN}"
    page = session.get(f"{server.base}/projects/acme/errors/{group['id']}", timeout=10).text
    href = page.split('class="log-record-link" href="')[1].split('"')[0].replace("&amp;", "&")
    query = {k: v[0] for k, v in parse_qs(urlparse(href).query).items()}
    assert (query["trace_id"], int(query["at"])) == (trace_id, event["log_time_ns"])
    records = get(server, API + "/logs", **{k: v for k, v in query.items() if k != "at"})
    linked = [r for r in records["items"] if r["time_ns"] == event["log_time_ns"]]
    assert [(r["body"], r["span_id"], r["severity_text"]) for r in linked] == [
        ("charge failed for order 42", span_id, "ERROR")]
    assert linked[0]["attributes"]["exception.type"] == "CardDeclined"
    logs_page = session.get(server.base + href, timeout=10).text
    assert 'class="log sev-error linked"' in logs_page

    # The trace: both records, each on its span.
    trace = get(server, f"{API}/traces/{trace_id}")
    assert len(trace["rows"]) == 2
    assert sorted((r["body"], r["span_id"]) for r in trace["logs"]) == [
        ("charge failed for order 42", span_id), ("charging order 42", app["root_span_id"])]
    (info,) = [r for r in trace["logs"] if r["severity_text"] == "INFO"]
    assert info["attributes"]["order.id"] == 42
    assert info["resource"]["service.name"] == "sdk-shop"
    trace_page = session.get(f"{server.base}/projects/acme/traces/{trace_id}", timeout=10).text
    assert trace_page.count('class="wf-log sev-') == 2
