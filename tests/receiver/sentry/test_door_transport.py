"""The Sentry door's transport on the real collector: content encodings (brotli
too, and a brotli bomb), browser requests (CORS preflight, text/plain with the key
in the query) and 429 with Sentry's rate-limit headers under overload."""

from __future__ import annotations

import gzip
import re
import socket
import time
import zlib
from collections.abc import Callable, Iterator

import brotli
import pytest
import requests

from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import (
    KEY,
    ORIGIN,
    auth_header,
    post_envelope,
    project_id,
    sentry_items,
    start_sentry,
)
from tests.support.server import Server, collectors

SESSIONS = envelope({}, [item("session", {"sid": "a", "status": "ok"}),
                         item("client_report", {"discarded_events": []})])


@pytest.fixture(scope="module")
def sentry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One collector for the module: its tests store nothing that another reads, and
    compare the items it counted before and after what they sent."""
    with collectors(tmp_path_factory.mktemp("transport")) as start:
        yield start_sentry(start)


def counted_since(server: Server, before: dict[str, float]) -> dict[str, float]:
    """The Sentry items counted since `before` (sentry_items), by type."""
    return {kind: n - before.get(kind, 0) for kind, n in sentry_items(server).items()
            if n != before.get(kind, 0)}


@pytest.mark.parametrize(("encoding", "pack"), [
    ("gzip", gzip.compress), ("deflate", zlib.compress), ("br", brotli.compress)])
def test_compressed_envelopes_are_read(sentry: Server, encoding: str,
                                       pack: Callable[[bytes], bytes]) -> None:
    before = sentry_items(sentry)
    response = post_envelope(sentry, pack(SESSIONS), headers={"Content-Encoding": encoding})
    assert response.status_code == 200, response.text
    assert counted_since(sentry, before) == {"session": 1, "client_report": 1}


def test_a_brotli_bomb_is_413_and_a_broken_stream_400(sentry: Server) -> None:
    bomb = brotli.compress(b"\x00" * (64 * 1024 * 1024), quality=1)
    assert len(bomb) < 1024 * 1024
    response = post_envelope(sentry, bomb, headers={"Content-Encoding": "br"})
    assert response.status_code == 413
    assert "after decompression" in response.json()["detail"]
    response = post_envelope(sentry, brotli.compress(SESSIONS)[:-3],
                             headers={"Content-Encoding": "br"})
    assert response.status_code == 400
    assert "truncated" in response.json()["detail"]
    assert requests.get(sentry.base + "/health", timeout=10).status_code == 200


def test_a_preflight_from_a_configured_origin(sentry: Server) -> None:
    url = f"{sentry.base}/api/{project_id(sentry)}/envelope/"
    response = requests.options(url, timeout=10, headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-sentry-auth"})
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    assert "x-sentry-auth" in response.headers["Access-Control-Allow-Headers"].lower()
    other = requests.options(url, timeout=10, headers={
        "Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_a_browser_style_request_with_the_key_in_the_query(sentry: Server) -> None:
    """What @sentry/browser sends: fetch() with text/plain and the key in the query
    string (no custom header, so no preflight); the browser may read the answer and
    the rate-limit headers."""
    response = requests.post(
        f"{sentry.base}/api/{project_id(sentry)}/envelope/", data=SESSIONS, timeout=10,
        params={"sentry_key": KEY, "sentry_version": "7", "sentry_client": "sentry.javascript"
                ".browser/8.0.0"},
        headers={"Origin": ORIGIN, "Content-Type": "text/plain;charset=UTF-8"})
    assert response.status_code == 200, response.text
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    exposed = response.headers["Access-Control-Expose-Headers"].lower()
    assert "retry-after" in exposed and "x-sentry-rate-limits" in exposed
    refused = requests.post(f"{sentry.base}/api/{project_id(sentry)}/envelope/",
                            data=SESSIONS, params={"sentry_key": "0" * 32}, timeout=10,
                            headers={"Origin": ORIGIN, "Content-Type": "text/plain"})
    assert refused.status_code == 401
    assert refused.headers["Access-Control-Allow-Origin"] == ORIGIN


def _inflight_bytes(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r'^sounding_inflight_body_bytes\{receiver="http"\} (\S+)$', text, re.M)
    return float(match.group(1)) if match else 0.0


def hold_body_budget(server: Server, size: int) -> socket.socket:
    """A request whose body stops one byte short: it holds `size` bytes of the
    receiver's body budget until the socket is closed."""
    host, port = server.base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall((f"POST /api/{project_id(server)}/envelope/ HTTP/1.1\r\nHost: x\r\n"
                  f"X-Sentry-Auth: Sentry sentry_key={KEY}\r\n"
                  f"Content-Length: {size + 1}\r\n\r\n").encode() + b"x" * size)
    deadline = time.monotonic() + 10
    while _inflight_bytes(server) < size:
        assert time.monotonic() < deadline, "the held body was never read"
        time.sleep(0.02)
    return sock


def test_overload_is_429_with_retry_after_and_sentry_rate_limits(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start_sentry(start, sqlite_url, env={
        "SOUNDING__RECEIVERS__HTTP__MAX_INFLIGHT_BODY_BYTES": "100000"})
    holder = hold_body_budget(server, 90_000)
    body = envelope({}, [item("attachment", b"a" * 20_000)])
    response = post_envelope(server, body, headers={"Origin": ORIGIN})
    assert response.status_code == 429, response.text
    assert response.headers["Retry-After"] == "1"
    assert response.headers["X-Sentry-Rate-Limits"] == "1::organization:overloaded"
    assert "too many request bodies" in response.json()["detail"]
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    holder.close()
    deadline = time.monotonic() + 10
    while post_envelope(server, body).status_code != 200:
        assert time.monotonic() < deadline, "ingest did not resume"
        time.sleep(0.05)


def test_the_auth_header_is_case_insensitive_in_its_scheme(sentry: Server) -> None:
    headers = {"X-Sentry-Auth": auth_header()["X-Sentry-Auth"].replace("Sentry", "sentry", 1)}
    assert post_envelope(sentry, SESSIONS, key=None, headers=headers).status_code == 200
