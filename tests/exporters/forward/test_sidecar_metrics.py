"""A sidecar forwards metric points to its gateway as they arrived (cumulative stays
cumulative), and the gateway stores what it would have stored from the SDK itself."""

from __future__ import annotations

import time
from pathlib import Path

import requests

from tests.exporters.forward.test_sidecar import free_port, start_gateway, start_sidecar
from tests.receiver.metrics_helpers import collector_request
from tests.support.server import Server


def _points(server: Server) -> list[tuple[object, ...]]:
    return [tuple(r) for r in server.query(
        "SELECT s.name, s.temporality, p.time_ns, p.value, p.count FROM metric_points p "
        "JOIN metric_series s ON s.series_key = p.series_key ORDER BY s.name, p.time_ns")]


def test_metrics_reach_the_gateway_as_they_arrived(tmp_path: Path) -> None:
    port = free_port()
    gateway = start_gateway(tmp_path, port)
    sidecar = start_sidecar(tmp_path, port)
    try:
        for time_s in (60, 120):  # the second cumulative point: a delta upstream
            response = requests.post(
                sidecar.base + "/ingest/v1/metrics",
                data=collector_request(time_s).SerializeToString(), timeout=30,
                headers={"Authorization": "Bearer sidecar-key",
                         "Content-Type": "application/x-protobuf"})
            assert response.status_code == 202, response.text
        deadline = time.monotonic() + 30
        while len(_points(gateway)) < 10 and time.monotonic() < deadline:
            time.sleep(0.1)
        points = _points(gateway)
    finally:
        assert sidecar.stop() == 0, sidecar.log()
        assert gateway.stop() == 0, gateway.log()
    assert len(points) == 10
    by_name = {}
    for name, temporality, _, value, count in points:
        by_name.setdefault(name, []).append((temporality, value, count))
    # Cumulative as sent (temporality 2), stored as deltas by the gateway.
    assert by_name["system.network.io"] == [(2, 1234.0, 0), (2, 0.0, 0)]
    assert by_name["http.server.request.duration"] == [(2, None, 6), (2, None, 0)]
    assert sidecar.query("SELECT count(*) FROM metric_points") == [(0,)]
