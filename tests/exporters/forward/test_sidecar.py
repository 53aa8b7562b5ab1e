"""Two real collectors: a sidecar (receivers, no processors, `exporters: [forward]`,
no dashboard, its SQLite file used only as the queue) forwarding to a gateway.
Every signal arrives exactly once (spans deduplicated by id, log records by their
key); a gateway that is
down for a while loses nothing; a sidecar killed with a backlog loses nothing it
acknowledged."""

from __future__ import annotations

import os
import signal
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.exporters.senders import (
    SPANS_PER_REQUEST,
    assert_all_acknowledged_stored,
    error_batch,
    join,
    start_senders,
    trace_request,
    wait_for_acks,
)
from tests.receiver.logs_helpers import log_pb, logs_request, stored_logs
from tests.support.server import Server, start_server

# Long (tests/conftest.py): traffic through a gateway outage and a kill -9, ~70 s alone.
pytestmark = pytest.mark.long
GATEWAY_KEY = "gateway-key"
LOGS_PER_REQUEST = 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sidecar_config(tmp_path: Path, gateway_port: int, decode_workers: int = 0) -> str:
    path = tmp_path / "sidecar.yaml"
    path.write_text(f"""
dashboard: {{enabled: false}}
service:
  decode_workers: {decode_workers}
  pipeline:
    receivers: [http, otlp_grpc, otlp_http]
    processors: []
    exporters: [forward]
exporters:
  forward:
    endpoint: http://127.0.0.1:{gateway_port}
    headers: {{Authorization: "Bearer {GATEWAY_KEY}"}}
    max_backoff_seconds: 1
""")
    return str(path)


def start_sidecar(tmp_path: Path, gateway_port: int, **kwargs: Any) -> Server:
    return start_server(f"sqlite:///{tmp_path / 'sidecar.db'}", keys={"acme": "sidecar-key"},
                        config=sidecar_config(tmp_path, gateway_port, **kwargs))


def start_gateway(tmp_path: Path, port: int) -> Server:
    return start_server(f"sqlite:///{tmp_path / 'gateway.db'}", keys={"acme": GATEWAY_KEY},
                        env={"SOUNDING_HTTP_PORT": str(port)})


class Sent:
    """What the sidecar acknowledged, each record tagged so it can be found upstream."""

    def __init__(self) -> None:
        self.traces: list[str] = []
        self.logs: list[str] = []
        self.errors: list[str] = []
        self.deploys: list[str] = []
        self.routes: list[str] = []

    def send(self, sidecar: Server) -> None:
        tag = uuid.uuid4().hex
        body = trace_request(bytes.fromhex(tag))
        for _ in range(2):  # a client retrying: the gateway keeps each span once
            response = requests.post(sidecar.base + "/ingest/v1/traces", data=body, timeout=30,
                                     headers={"Authorization": f"Bearer {sidecar.key}",
                                              "Content-Type": "application/x-protobuf"})
            assert response.status_code == 202, response.text
        self.traces.append(tag)
        # No observed time: the sidecar fills in its time of receipt, yet forwards
        # the record as sent, so that the gateway keeps one of the two.
        logs = logs_request(*(log_pb(tag, f"{tag} line {i}") for i in range(LOGS_PER_REQUEST)),
                            service="sidecar-app").SerializeToString()
        for _ in range(2):
            response = requests.post(sidecar.base + "/ingest/v1/logs", data=logs, timeout=30,
                                     headers={"Authorization": f"Bearer {sidecar.key}",
                                              "Content-Type": "application/x-protobuf"})
            assert response.status_code == 202, response.text
        self.logs.append(tag)
        assert sidecar.post("/ingest/errors/batch", error_batch(tag, 3)).status_code == 202
        self.errors += [f"{tag}-{i}" for i in range(3)]
        assert sidecar.post("/ingest/deploys", {"git_sha": tag, "env": "prod"}
                            ).status_code == 202
        self.deploys.append(tag)
        route = f"/fwd/{tag}"
        assert sidecar.post("/ingest/requests", {"requests": [
            {"method": "GET", "route": route, "status": 200, "duration_ms": 5},
            {"method": "GET", "route": route, "status": 500, "duration_ms": 7}]}
                            ).status_code == 202
        self.routes.append(route)

    def arrived(self, gateway: Server) -> bool:
        spans = gateway.spans_per_trace()
        logs = logs_per_trace(gateway)
        errors = {r[0] for r in gateway.query("SELECT request_id FROM error_events")}
        deploys = {r[0] for r in gateway.query("SELECT git_sha FROM deploys")}
        routes = {r[0] for r in gateway.query("SELECT route FROM request_rollups")}
        return (all(t in spans for t in self.traces) and all(t in logs for t in self.logs)
                and set(self.errors) <= errors
                and set(self.deploys) <= deploys and set(self.routes) <= routes)

    def wait_arrived(self, gateway: Server, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.arrived(gateway):
            assert time.monotonic() < deadline, "not everything arrived at the gateway"
            time.sleep(0.1)

    def assert_exactly_once(self, gateway: Server) -> None:
        spans = gateway.spans_per_trace()
        assert {t: spans.get(t) for t in self.traces} == {
            t: SPANS_PER_REQUEST for t in self.traces}
        logs = logs_per_trace(gateway)
        assert {t: logs.get(t) for t in self.logs} == {t: LOGS_PER_REQUEST for t in self.logs}
        records = stored_logs(gateway, self.logs[0])
        assert sorted(r["body"] for r in records) == [
            f"{self.logs[0]} line {i}" for i in range(LOGS_PER_REQUEST)]
        assert {(r["service_name"], r["scope_name"], r["span_id"], r["severity_text"])
                for r in records} == {("sidecar-app", "lib", "01" * 8, "INFO")}
        errors = gateway.query("SELECT request_id, count(*) FROM error_events "
                               "GROUP BY request_id")
        assert {r: n for r, n in errors if r in set(self.errors)} == {
            e: 1 for e in self.errors}
        deploys = gateway.query("SELECT git_sha, count(*) FROM deploys GROUP BY git_sha")
        assert {g: n for g, n in deploys if g in set(self.deploys)} == {
            d: 1 for d in self.deploys}
        rollups = gateway.query("SELECT route, sum(count), sum(error_count) "
                                "FROM request_rollups GROUP BY route")
        assert {r: (int(c), int(e)) for r, c, e in rollups if r in set(self.routes)} == {
            r: (2, 1) for r in self.routes}


def logs_per_trace(server: Server) -> dict[str, int]:
    return {bytes(trace_id).hex(): count for trace_id, count in server.query(
        "SELECT trace_id, count(*) FROM logs GROUP BY trace_id")}


def test_every_signal_arrives_once_and_a_gateway_outage_loses_nothing(
        tmp_path: Path, start: Callable[..., Server]) -> None:
    port = free_port()
    gateway = start_gateway(tmp_path, port)
    # Through a decode worker: the exporter's encoding runs as its preparation there.
    sidecar = start(f"sqlite:///{tmp_path / 'sidecar.db'}", keys={"acme": "sidecar-key"},
                    config=sidecar_config(tmp_path, port, decode_workers=1))
    sent = Sent()
    try:
        for _ in range(3):
            sent.send(sidecar)
        sent.wait_arrived(gateway)
        sent.assert_exactly_once(gateway)
        # The gateway goes away for a while; the sidecar keeps acknowledging.
        assert gateway.stop() == 0
        for _ in range(3):
            sent.send(sidecar)
        time.sleep(1.5)
        assert sidecar.query("SELECT sum(records) FROM outbox")[0][0] > 0
        gateway = start_gateway(tmp_path, port)
        sent.wait_arrived(gateway)
        sent.assert_exactly_once(gateway)
        deadline = time.monotonic() + 10
        while sidecar.query("SELECT count(*) FROM outbox")[0][0]:
            assert time.monotonic() < deadline, "the sidecar's queue did not empty"
            time.sleep(0.1)
        # The sender counts a row after deleting it: the count may trail the empty queue.
        sidecar.wait_for_metric("sounding_forward_sent_records_total", 18,
                                exporter="forward", signal="errors")
        metrics = requests.get(sidecar.base + "/metrics", timeout=10).text
        assert 'sounding_forward_backlog_records{exporter="forward"} 0.0' in metrics
        assert 'sounding_forward_sent_records_total{exporter="forward",signal="errors"} 18.0' \
            in metrics
        assert requests.get(sidecar.base + "/health", timeout=10).status_code == 200
    finally:
        assert gateway.stop() == 0, gateway.log()
        assert "Traceback" not in gateway.log(), gateway.log()


def test_kill_9_of_a_sidecar_with_a_backlog_loses_nothing_it_acknowledged(
        tmp_path: Path, start: Callable[..., Server]) -> None:
    port = free_port()  # the gateway is down at first
    sidecar = start_sidecar(tmp_path, port)
    try:
        senders = start_senders(sidecar, count=3, max_requests=120)
        wait_for_acks(senders, at_least=40)
        os.kill(sidecar.proc.pid, signal.SIGKILL)  # mid-traffic, with a backlog
        join(senders)
    finally:
        sidecar.stop()
    assert sidecar.proc.returncode == -signal.SIGKILL
    acked = sum(s.acked for s in senders)
    assert acked >= 40
    start(f"sqlite:///{tmp_path / 'sidecar.db'}", keys={"acme": "sidecar-key"},
          config=sidecar_config(tmp_path, port))
    gateway = start_gateway(tmp_path, port)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                assert_all_acknowledged_stored(gateway, senders)
                break
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        assert gateway.stop() == 0, gateway.log()
