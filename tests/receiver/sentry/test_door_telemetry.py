"""The Sentry door's `log`, `otel_log` and `trace_metric` items on the real collector,
over SQLite and PostgreSQL: stored as log records and metric points and shown by the
read API (/api/v1 logs and metrics), scrubbed like any log, counted in usage; an item
that cannot be read drops alone and is counted under its signal, on the event loop
and in a decode worker alike. The payloads are the real SDKs' (telemetry_items.py),
dated now."""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.e2e import api, start_with_api, wait_for
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import post_envelope, project_id, start_sentry
from tests.receiver.sentry.telemetry_items import (
    LOG_HEADERS,
    METRIC_HEADERS,
    NODE_LOGS,
    PYTHON_LOGS,
    PYTHON_METRICS,
    TRACE_ID,
)
from tests.support.server import Server, collectors

TEMPLATE = "order {order} shipped"


def dated(payload: dict[str, Any], **more: Any) -> dict[str, Any]:
    """The payload with its records dated now (a second apart at most), `more` added
    to each record's attributes."""
    now = time.time()
    out = copy.deepcopy(payload)
    for i, record in enumerate(out["items"]):
        record["timestamp"] = now - 1 + i / 1000
        record["attributes"].update(
            {name: {"type": "string", "value": value} for name, value in more.items()})
    return out


def telemetry(**more: Any) -> bytes:
    return envelope({"sent_at": "2026-12-08T01:11:07.889231Z"}, [
        item("log", dated(PYTHON_LOGS, **more), item_count=2, **LOG_HEADERS),
        item("log", dated(NODE_LOGS), item_count=1, **LOG_HEADERS),
        item("trace_metric", dated(PYTHON_METRICS), item_count=3, **METRIC_HEADERS)])


def dropped(server: Server, signal: str) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    found = re.search(rf'^sounding_records_dropped_total\{{reason="invalid",signal="{signal}"'
                      r'\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def usage(server: Server) -> dict[tuple[str, str], int]:
    rows = server.query("SELECT category, outcome, SUM(records) FROM usage_hourly WHERE "
                        "project_id = :p GROUP BY category, outcome", p=project_id(server))
    return {(r[0], r[1]): int(r[2]) for r in rows}


@pytest.fixture(scope="module")
def sentry(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with collectors(tmp_path_factory.mktemp("telemetry")) as start:
        yield start_with_api(start, module_db_url)


def test_logs_and_metrics_are_stored_and_read_back_by_the_api(sentry: Server) -> None:
    answer = post_envelope(sentry, telemetry(password="hunter2"))
    assert answer.status_code == 200, answer.text

    found = api(sentry, "/logs", attr=f"sentry.message.template={TEMPLATE}")
    [shipped] = found["items"]
    assert (shipped["body"], shipped["severity_number"], shipped["trace_id"]) == (
        "order 42 shipped", 9, TRACE_ID)
    assert shipped["attributes"]["sentry.message.parameter.order"] == 42
    assert shipped["attributes"]["password"] != "hunter2"  # scrubbed, as any log
    assert shipped["resource"]["service.version"] == "shop@1.2"
    assert shipped["resource"]["deployment.environment.name"] == "staging"
    by_trace = api(sentry, "/logs", trace_id=TRACE_ID)["items"]
    assert sorted(r["body"] for r in by_trace) == ["order 42 shipped", "stock low for sku-1"]
    warned = api(sentry, "/logs", severity="WARN")["items"]
    assert [r["body"] for r in warned] == ["stock low for sku-1"]
    assert api(sentry, "/logs", service="unknown_service:node")["items"][0]["body"] == \
        "order 42 shipped"

    names = {m["name"]: m for m in api(sentry, "/metrics")["metrics"]}
    assert (names["orders.shipped"]["kind"], names["queue.depth"]["kind"],
            names["checkout.ms"]["kind"]) == ("sum", "gauge", "exponential_histogram")
    assert names["checkout.ms"]["unit"] == "millisecond"
    counted = api(sentry, "/metrics/orders.shipped", range="1h", agg="sum")
    assert sum(v or 0 for v in counted["groups"][0]["values"]) == 1
    p50 = api(sentry, "/metrics/checkout.ms", range="1h", agg="p50")
    [value] = [v for v in p50["groups"][0]["values"] if v is not None]
    assert value == pytest.approx(187.5, rel=0.003)
    regions = api(sentry, "/metrics/orders.shipped", range="1h", agg="sum", group_by="region")
    assert [g["group"] for g in regions["groups"]] == ["eu"]

    counts = wait_for(lambda: (found := usage(sentry)).get(("log", "accepted")) and found,
                      "the usage of logs")
    assert (counts[("log", "accepted")], counts[("metric", "accepted")]) == (3, 3)


def test_a_retried_envelope_stores_its_logs_once(sentry: Server) -> None:
    body = envelope({}, [item("log", dated(PYTHON_LOGS, retry="yes"), **LOG_HEADERS)])
    for _ in range(2):
        assert post_envelope(sentry, body).status_code == 200
    assert len(api(sentry, "/logs", attr="retry=yes")["items"]) == 2


def test_an_item_that_cannot_be_read_drops_alone_and_is_counted(sentry: Server) -> None:
    before = dropped(sentry, "logs"), dropped(sentry, "metrics")
    body = envelope({}, [
        item("log", b"{not json", **LOG_HEADERS),
        item("log", {"items": [{"level": "info"}, dated(PYTHON_LOGS, bad="kept")["items"][0]]},
             **LOG_HEADERS),
        item("trace_metric", {"items": [{"name": "n", "type": "set", "value": 1}]},
             **METRIC_HEADERS),
        item("event", {"message": "the envelope is kept", "level": "error"})])
    answer = post_envelope(sentry, body)
    assert answer.status_code == 200, answer.text
    assert len(api(sentry, "/logs", attr="bad=kept")["items"]) == 1
    assert (dropped(sentry, "logs"), dropped(sentry, "metrics")) == (
        before[0] + 2, before[1] + 1)
    counts = wait_for(lambda: (found := usage(sentry)).get(("metric", "invalid")) and found,
                      "the usage of what was dropped")
    assert counts[("log", "invalid")] >= 2


def test_a_decode_worker_stores_and_counts_them_too(start: Callable[..., Server],
                                                   db_url: str) -> None:
    offloading = start_sentry(start, db_url, env={
        "SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN, "SOUNDING__SERVICE__DECODE_MIN_BYTES": "0"})
    body = envelope({}, [item("log", dated(PYTHON_LOGS, worker="yes"), **LOG_HEADERS),
                         item("trace_metric", dated(PYTHON_METRICS), **METRIC_HEADERS),
                         item("log", b"[", **LOG_HEADERS)])
    assert post_envelope(offloading, body).status_code == 200
    text = requests.get(offloading.base + "/metrics", timeout=10).text
    assert re.search(r"^sounding_decode_offloaded_requests_total 1\.0$", text, re.M)
    assert len(api(offloading, "/logs", attr="worker=yes")["items"]) == 2
    assert {m["name"] for m in api(offloading, "/metrics")["metrics"]} == {
        "orders.shipped", "queue.depth", "checkout.ms"}
    assert dropped(offloading, "logs") == 1 and dropped(offloading, "spans") == 0
