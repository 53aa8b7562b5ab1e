"""receiver/signals/table.py: every signal is declared once, names what the .proto
files serve, and is reachable through both doors of the real server."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
import requests
from google.protobuf import descriptor_pool

from receiver.signals.table import SIGNALS, Signal
from tests.receiver.otlp_helpers import grpc_auth
from tests.support.server import Server, start_server

# The contract's ingest paths (docs/routes.md): one row each.
PATHS = {"/ingest/v1/traces", "/ingest/v1/logs", "/ingest/v1/metrics", "/ingest/errors",
         "/ingest/errors/batch",
         "/ingest/deploys", "/ingest/requests"}


def test_each_signal_has_its_own_name_path_and_method() -> None:
    assert {s.http.path for s in SIGNALS} == PATHS
    for key in (lambda s: s.name, lambda s: s.http.path,
                lambda s: (s.grpc.service, s.grpc.method)):
        values = [key(s) for s in SIGNALS]
        assert len(set(values)) == len(values)


@pytest.mark.parametrize("signal", SIGNALS, ids=lambda s: s.name)
def test_each_grpc_method_is_one_the_protos_declare(signal: Signal) -> None:
    # The generated modules registered their files in the default pool on import.
    service = descriptor_pool.Default().FindServiceByName(signal.grpc.service)
    assert service.FindMethodByName(signal.grpc.method) is not None


@pytest.fixture(scope="module")
def both_ports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("doors") / "sounding.db"
    server = start_server(f"sqlite:///{path}", wait_for=2,
                          env={"SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true"})
    yield server
    assert server.stop() == 0, server.log()


@pytest.mark.parametrize("signal", SIGNALS, ids=lambda s: s.name)
def test_the_http_door_routes_each_signal_to_its_handler(both_ports: Server,
                                                         signal: Signal) -> None:
    # A JSON array is valid JSON but no signal's document: the handler's own 400,
    # with the signal's metric label, where an unrouted path would be a 404.
    paths = [both_ports.base + signal.http.path]
    if signal.http.otlp_path is not None:
        paths.append(both_ports.urls[1] + signal.http.otlp_path)
    for url in paths:
        response = requests.post(url, data=b"[]", headers=both_ports.headers(), timeout=30)
        assert response.status_code == 400, (url, response.text)
        assert response.json()["details"], url


@pytest.mark.parametrize("signal", SIGNALS, ids=lambda s: s.name)
def test_the_grpc_door_serves_each_signal(both_ports: Server, signal: Signal) -> None:
    # Bytes no message can hold: the method's own INVALID_ARGUMENT, where a method
    # that is not served would be UNIMPLEMENTED.
    with grpc.insecure_channel(both_ports.grpc_target) as channel:
        call = channel.unary_unary(f"/{signal.grpc.service}/{signal.grpc.method}")
        with pytest.raises(grpc.RpcError) as caught:
            call(b"\xff\xff\xff", metadata=grpc_auth(both_ports), timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
