"""Admission control (runtime/admission.py): many small requests are shed with 503
+ Retry-After (gRPC UNAVAILABLE) past the bound on requests in flight, before
their body is decoded; /health is never shed; every 202 is stored."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc
import requests
from google.protobuf.json_format import ParseDict

from proto.sounding.v1 import ingest_pb2, ingest_pb2_grpc
from runtime.admission import MIN_IN_FLIGHT
from tests.receiver.otlp_helpers import grpc_auth, trailer
from tests.receiver.test_errors import error
from tests.receiver.test_otlp_http import post
from tests.runtime.test_offload import _explode_config, _named
from tests.support.server import Server

CLIENTS = 24
REQUESTS_EACH = 25


def test_oversubscribed_small_requests_are_shed_and_every_202_is_stored(
        start: Callable[..., Server]) -> None:
    """24 clients sending single errors over HTTP and gRPC against a bound of one
    request in flight: some are refused, with Retry-After; /health keeps answering
    200 meanwhile; what was acknowledged is exactly what is stored."""
    server = start(env={"SOUNDING__SERVICE__MAX_REQUESTS_IN_FLIGHT": "1"})
    acked: list[str] = []
    refused: list[str] = []  # Retry-After values, HTTP and gRPC alike
    other: list[str] = []
    health: list[int] = []
    lock = threading.Lock()

    def http_client() -> None:
        session = requests.Session()
        for _ in range(REQUESTS_EACH):
            request_id = uuid.uuid4().hex
            response = session.post(server.base + "/ingest/errors", timeout=30,
                                    json=error(request_id=request_id), headers=server.headers())
            with lock:
                if response.status_code == 202:
                    acked.append(request_id)
                elif response.status_code == 503:
                    refused.append(response.headers.get("Retry-After", ""))
                else:
                    other.append(f"{response.status_code} {response.text}")

    def grpc_client() -> None:
        with grpc.insecure_channel(server.grpc_target) as channel:
            stub = ingest_pb2_grpc.ErrorServiceStub(channel)
            for _ in range(REQUESTS_EACH):
                request_id = uuid.uuid4().hex
                record = ParseDict(error(request_id=request_id), ingest_pb2.ErrorRecord())
                try:
                    stub.Report(record, metadata=grpc_auth(server), timeout=30)
                except grpc.RpcError as exc:
                    with lock:
                        if exc.code() == grpc.StatusCode.UNAVAILABLE:  # type: ignore[attr-defined]
                            retry = trailer(exc, "google.rpc.retryinfo-bin")
                            refused.append("1" if retry else "")
                        else:
                            other.append(str(exc))
                else:
                    with lock:
                        acked.append(request_id)

    def health_checks(stop: threading.Event) -> None:
        while not stop.wait(0.05):
            health.append(requests.get(server.base + "/health", timeout=30).status_code)

    stop = threading.Event()
    checker = threading.Thread(target=health_checks, args=(stop,))
    checker.start()
    clients = [threading.Thread(target=http_client if i % 2 else grpc_client)
               for i in range(CLIENTS)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join(120)
    stop.set()
    checker.join(30)

    assert not other, other[:5]
    assert refused, "nothing was shed"
    assert set(refused) == {"1"}, "a refusal without Retry-After"
    assert acked, "nothing was accepted"
    assert health and set(health) == {200}
    stored = {row.request_id for row in server.query("SELECT request_id FROM error_events")}
    assert stored == set(acked)


def test_while_the_event_loop_is_late_ingest_is_shed_and_health_answers(
        start: Callable[..., Server], tmp_path: Path) -> None:
    """A processor that holds the event loop for 3 s (the test plugin's boom-slow
    span, decoded inline with no decode workers): of the requests that arrived
    meanwhile, all but the few always admitted (MIN_IN_FLIGHT in flight) find the
    loop far behind and are refused with 503 + Retry-After; /health
    is not, and once the loop has caught up ingest is accepted again."""
    server = start(config=_explode_config(tmp_path), env={
        "SOUNDING_DECODE_WORKERS": "0", "SOUNDING__SERVICE__MAX_EVENT_LOOP_LAG_MS": "50"})
    slow = threading.Thread(target=post, args=(server, _named("boom-slow")))
    slow.start()
    time.sleep(1.0)  # the loop is inside the 3 s processor now
    answers: list[requests.Response] = []
    senders = [threading.Thread(target=lambda: answers.append(
        server.post("/ingest/errors", error()))) for _ in range(16)]
    for thread in senders:
        thread.start()
    health = requests.get(server.base + "/health", timeout=30)
    for thread in (slow, *senders):
        thread.join(30)
    assert health.status_code == 200
    statuses = [r.status_code for r in answers]
    assert len(statuses) == 16 and set(statuses) == {202, 503}, [r.text for r in answers]
    assert statuses.count(202) <= MIN_IN_FLIGHT
    refused = [r for r in answers if r.status_code == 503]
    assert all(r.headers["Retry-After"] == "1" for r in refused)
    assert "busy" in refused[0].json()["error"]
    deadline = time.monotonic() + 10
    while server.post("/ingest/errors", error()).status_code != 202:
        assert time.monotonic() < deadline, "ingest did not resume"
        time.sleep(0.05)
