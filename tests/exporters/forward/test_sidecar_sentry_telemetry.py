"""Sentry logs and metrics through a sidecar: the `log` and `trace_metric` items the
real SDKs send (tests/receiver/sentry/telemetry_items.py), sent to a sidecar collector
that stores them and forwards them as OTLP, are stored by the gateway as the sidecar
stored them: the same log records (body, severity, trace, template attributes,
resource) and the same metric series of the same kinds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.exporters.forward.test_sidecar_sentry import GATEWAY_KEY, sidecar_config, wait_for
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import KEYS, post_envelope
from tests.receiver.sentry.telemetry_items import (
    LOG_HEADERS,
    METRIC_HEADERS,
    PYTHON_LOGS,
    PYTHON_METRICS,
)
from tests.support.server import Server

# Long (tests/conftest.py): two collectors per store.
pytestmark = pytest.mark.long
LOGS = ("SELECT body_text, severity_number, severity_text, trace_id, span_id, time_ns "
        "FROM logs ORDER BY time_ns")
SERIES = "SELECT name, kind, unit, temporality, monotonic FROM metric_series ORDER BY name"


def test_sentry_logs_and_metrics_reach_the_gateway_as_the_sidecar_stored_them(
        tmp_path: Path, db_url: str, start: Callable[..., Server]) -> None:
    gateway = start(db_url, keys={"acme": GATEWAY_KEY})
    sidecar = start(f"sqlite:///{tmp_path / 'sidecar.db'}", keys=KEYS,
                    config=sidecar_config(tmp_path, gateway))
    body = envelope({}, [item("log", PYTHON_LOGS, **LOG_HEADERS),
                         item("trace_metric", PYTHON_METRICS, **METRIC_HEADERS)])
    assert post_envelope(sidecar, body).status_code == 200
    wait_for(lambda: len(gateway.query(LOGS)) == 2 and len(gateway.query(SERIES)) == 3,
             "the logs and metrics did not reach the gateway")
    assert [tuple(r) for r in gateway.query(LOGS)] == [tuple(r) for r in sidecar.query(LOGS)]
    assert [tuple(r) for r in gateway.query(SERIES)] == [
        tuple(r) for r in sidecar.query(SERIES)]
    points = "SELECT value, count, sum FROM metric_points ORDER BY time_ns"
    assert [tuple(r) for r in gateway.query(points)] == [tuple(r) for r in sidecar.query(points)]
