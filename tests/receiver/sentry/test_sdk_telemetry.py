"""The real sentry-sdk, 3.x and 2.x, end to end (sdk3_telemetry_app.py,
sdk2_telemetry_app.py, each in its major's environment): an app that logs through
`sentry_sdk.logger` and `logging`, counts, gauges and times with `sentry_sdk.metrics`
and captures an error inside a span (3.x) or a transaction (2.x), with only its DSN
pointed at Sounding. Its error, its span, its logs and its metrics are stored, on
SQLite and PostgreSQL, and the error, the span, the logs and the metrics are linked by
the trace id (the metrics carry it as their points' exemplar, which the read API
answers with each metric)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.e2e import api, start_with_api
from tests.receiver.sentry.helpers import dsn
from tests.receiver.sentry.sdk_apps import run_sdk3_app
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_3, clients.SENTRY_SDK_2)
# Each major's application, in its own environment, through its own public API.
APPS = {clients.SENTRY_SDK_3: "sdk3_telemetry_app.py",
        clients.SENTRY_SDK_2: "sdk2_telemetry_app.py"}
RELEASES = {clients.SENTRY_SDK_3: "shop@3.0.0", clients.SENTRY_SDK_2: "shop@2.0.0"}


@pytest.fixture(params=list(APPS))
def sent_to(request: pytest.FixtureRequest, start: Callable[..., Server], db_url: str
            ) -> tuple[Server, dict[str, Any]]:
    server = start_with_api(start, db_url)
    sent = run_sdk3_app(dsn(server), APPS[request.param], request.param)
    return server, {**sent, "client": request.param}


def test_the_error_span_logs_and_metrics_of_one_request_are_stored(
        sent_to: tuple[Server, dict[str, Any]]) -> None:
    server, sent = sent_to
    trace_id = sent["trace_id"]

    [(exception_class, error_trace, error_span)] = server.query(
        "SELECT exception_class, trace_id, span_id FROM error_events")
    assert (exception_class, error_trace, error_span) == ("ValueError", trace_id,
                                                          sent["span_id"])
    # The request's span, and the SDK's own POSTs of its envelopes, traced in it.
    spans = {(name, bytes(trace).hex()) for name, trace in server.query(
        "SELECT name, trace_id FROM spans")}
    assert ("POST /checkout", trace_id) in spans
    assert {trace for _, trace in spans} == {trace_id}
    [service] = {row[0] for row in server.query("SELECT service_name FROM spans")}

    logs = api(server, "/logs", trace_id=trace_id)["items"]
    assert sorted((r["body"], r["severity_number"]) for r in logs) == [
        ("order 42 shipped", 9), ("stock low for sku-1", 13)]
    shipped = next(r for r in logs if r["body"] == "order 42 shipped")
    assert shipped["span_id"] == sent["span_id"]
    assert shipped["attributes"]["sentry.message.template"] == "order {order} shipped"
    assert shipped["attributes"]["sentry.message.parameter.order"] == 42
    assert shipped["resource"]["service.version"] == RELEASES[sent["client"]]
    assert shipped["resource"]["deployment.environment.name"] == "staging"
    assert shipped["resource"]["telemetry.sdk.version"].startswith(
        "2." if sent["client"] == clients.SENTRY_SDK_2 else "3.")
    # The span names its service by the SDK's platform, as the logs do (no tag on either).
    assert shipped["resource"]["service.name"] == service == "unknown_service:python"
    logged = next(r for r in logs if r["body"] == "stock low for sku-1")
    assert logged["attributes"]["logger.name"] == "shop.checkout"
    assert logged["attributes"]["sentry.message.template"] == "stock low for %s"

    kinds = {m["name"]: (m["kind"], m["unit"]) for m in api(server, "/metrics")["metrics"]}
    assert kinds == {"orders.shipped": ("sum", ""), "queue.depth": ("gauge", "item"),
                     "checkout.duration": ("exponential_histogram", "millisecond")}
    counted = api(server, "/metrics/orders.shipped", range="1h", agg="sum",
                  group_by="region")
    assert [(g["group"], sum(v or 0 for v in g["values"])) for g in counted["groups"]] == [
        ("eu", 1)]
    p95 = api(server, "/metrics/checkout.duration", range="1h", agg="p95")
    assert [v for v in p95["groups"][0]["values"] if v is not None] == [
        pytest.approx(187.5, rel=0.003)]
    # Each metric leads to the request's trace and span.
    for name, value in (("orders.shipped", 1), ("queue.depth", 7),
                        ("checkout.duration", 187.5)):
        [exemplar] = api(server, f"/metrics/{name}", range="1h")["exemplars"]
        assert (exemplar["trace_id"], exemplar["span_id"], exemplar["value"]) == (
            trace_id, sent["span_id"], value)


def test_the_pages_show_them_linked(sent_to: tuple[Server, dict[str, Any]]) -> None:
    """What the API answers is on the pages a person reads: the trace page lists the
    request's logs, the Logs page finds them by their template, the Metrics page names
    the metrics, and the error's page links to the trace."""
    server, sent = sent_to
    trace_id = sent["trace_id"]

    def page(path: str, **params: str) -> str:
        answer = requests.get(f"{server.base}/projects/{server.project}{path}", params=params,
                              headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10)
        assert answer.status_code == 200, answer.text[:2000]
        return answer.text

    trace = page(f"/traces/{trace_id}")
    assert "order 42 shipped" in trace and "stock low for sku-1" in trace
    logs = page("/logs", attr="sentry.message.template=order {order} shipped", range="24h")
    assert "order 42 shipped" in logs and "stock low" not in logs
    metrics = page("/metrics")
    assert all(name in metrics for name in ("orders.shipped", "queue.depth",
                                            "checkout.duration"))
    [group_id] = [row[0] for row in server.query("SELECT id FROM error_groups")]
    assert f"/projects/{server.project}/traces/{trace_id}" in page(f"/errors/{group_id}")
