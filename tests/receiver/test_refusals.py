"""Refused requests in the log (receiver/refusals.py): one INFO line per kind per
interval naming the status, the endpoint, the reason and the key's id, then a count;
never the key. Against the real collector, over HTTP, the Sentry door and gRPC."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable

import grpc
import requests

from tests.support.server import Server

INTERVAL = "1"
REFUSED = re.compile(r"refused (\d{3}) on (\w+): (.*) \(key (\w+)\)(?:: (\d+) more like "
                     r"this in the last \d+ s)?$", re.MULTILINE)


def _key_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def _refusals(server: Server, status: int, endpoint: str) -> list[re.Match[str]]:
    return [m for m in REFUSED.finditer(server.log())
            if (int(m.group(1)), m.group(2)) == (status, endpoint)]


def _logged_total(matches: list[re.Match[str]]) -> int:
    """Each first line counts one; each summary line the count it gives."""
    return sum(int(m.group(5)) if m.group(5) else 1 for m in matches)


def _wait_for_total(server: Server, status: int, endpoint: str, total: int) -> None:
    deadline = time.monotonic() + 15
    while _logged_total(_refusals(server, status, endpoint)) < total:
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)


def test_a_flood_of_401s_is_a_few_lines_with_the_count_and_never_the_key(
        start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING__LOGGING__REFUSED_SECONDS": INTERVAL})
    bad_key = "snd_" + "ab" * 24
    flood = 400
    started = time.monotonic()
    with requests.Session() as session:
        for _ in range(flood):
            response = session.post(server.base + "/ingest/errors", json={},
                                    headers={"Authorization": f"Bearer {bad_key}"}, timeout=10)
            assert response.status_code == 401
    seconds = time.monotonic() - started
    _wait_for_total(server, 401, "errors", flood)
    lines = _refusals(server, 401, "errors")
    # Every refusal is accounted for, exactly, in a line per interval (a first line
    # and a summary), however many requests there were.
    assert _logged_total(lines) == flood
    assert len(lines) <= 2 * (seconds / float(INTERVAL) + 2), lines
    assert any(m.group(5) for m in lines), "no count was written"
    assert {m.group(3) for m in lines} == {"unknown or revoked API key"}
    assert {m.group(4) for m in lines} == {_key_id(bad_key)}
    assert bad_key not in server.log()
    assert re.search(r" INFO sounding\.refused: refused 401 on errors", server.log())


def test_each_kind_has_its_own_line_with_the_key_that_sent_it(
        start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING__LOGGING__REFUSED_SECONDS": "60",
                        "SOUNDING_MAX_BODY_BYTES": "1000"})
    key = server.key
    # 415 and 413 with a known key, 400 for a body that does not decode, 401 without
    # any key: each named by its own kind, on its own endpoint.
    assert requests.post(server.base + "/ingest/deploys", data="x", headers={
        "Authorization": f"Bearer {key}", "Content-Type": "text/plain"},
        timeout=10).status_code == 415
    assert server.post("/ingest/deploys", {"git_sha": "a" * 2000}).status_code == 413
    assert requests.post(server.base + "/ingest/deploys", data="{", headers=server.headers(),
                         timeout=10).status_code == 400
    assert requests.post(server.base + "/ingest/requests", json={},
                         timeout=10).status_code == 401
    for status, endpoint, key_id in ((415, "deploys", _key_id(key)),
                                     (413, "deploys", _key_id(key)),
                                     (400, "deploys", _key_id(key)),
                                     (401, "requests", "none")):
        _wait_for_total(server, status, endpoint, 1)
        (line,) = _refusals(server, status, endpoint)
        assert line.group(4) == key_id
    assert key not in server.log()


def test_the_sentry_door_names_the_key_of_the_dsn(start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING__LOGGING__REFUSED_SECONDS": "60"})
    dsn_key = "0123456789abcdef0123456789abcdef"
    response = requests.post(
        f"{server.base}/api/1/envelope/",
        data=f'{{"dsn":"http://{dsn_key}@127.0.0.1/1"}}\n{{"type":"session"}}\n{{}}\n',
        timeout=10)
    assert response.status_code == 401
    _wait_for_total(server, 401, "sentry_envelope", 1)
    (line,) = _refusals(server, 401, "sentry_envelope")
    assert line.group(4) == _key_id(dsn_key)
    assert dsn_key not in server.log()


def test_grpc_refusals_are_logged_and_throttled_alike(start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING__LOGGING__REFUSED_SECONDS": "60"})
    bad_key = "grpc-bad-key-1234"
    flood = 50
    with grpc.insecure_channel(server.grpc_target) as channel:
        export = channel.unary_unary(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        for _ in range(flood):
            try:
                export(b"", metadata=(("authorization", f"Bearer {bad_key}"),), timeout=10)
            except grpc.RpcError as error:
                assert error.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
            else:
                raise AssertionError("an unknown key was accepted")
    endpoints = {m.group(2) for m in REFUSED.finditer(server.wait_for_log("refused 401"))}
    (endpoint,) = endpoints
    (line,) = _refusals(server, 401, endpoint)  # one line: the rest are counted
    assert line.group(4) == _key_id(bad_key)
    assert bad_key not in server.log()
    # The count comes when the window closes, or at exit.
    assert server.stop() == 0
    assert _logged_total(_refusals(server, 401, endpoint)) == flood
