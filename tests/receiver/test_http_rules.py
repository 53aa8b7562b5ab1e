"""Rules every ingest endpoint shares: auth, method, media type, size; checked
from the headers before the body is read."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest
import requests

from tests.support.server import Server

ENDPOINTS = ["/ingest/v1/traces", "/ingest/errors", "/ingest/errors/batch", "/ingest/deploys",
             "/ingest/requests"]


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("authorization", [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwdw==",
                                           "Token test-key-acme", "Bearer wrong-key",
                                           "Bearer test-key-acme extra"])
def test_missing_malformed_or_unknown_key_is_a_401(shared_server: Server, path: str,
                                                   authorization: str | None) -> None:
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    response = requests.post(shared_server.base + path, data=b"{}", headers=headers, timeout=10)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert "error" in response.json()


def test_bearer_scheme_is_case_insensitive(shared_server: Server) -> None:
    response = requests.post(shared_server.base + "/ingest/deploys", json={"git_sha": "abc"},
                             headers={"Authorization": "bearer test-key-acme"}, timeout=10)
    assert response.status_code == 202


def _raw_request(server: Server, head: str) -> bytes:
    """Send only the request head (no body) and read what the server answers."""
    url = urlsplit(server.base)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(head.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data


def test_401_is_answered_before_the_body_is_sent(shared_server: Server) -> None:
    head = ("POST /ingest/errors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 4000000\r\n\r\n")
    assert _raw_request(shared_server, head).startswith(b"HTTP/1.1 401")


def test_413_is_answered_from_content_length_before_the_body(shared_server: Server) -> None:
    head = ("POST /ingest/errors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {shared_server.key}\r\nContent-Length: 900000000\r\n\r\n")
    assert _raw_request(shared_server, head).startswith(b"HTTP/1.1 413")


@pytest.mark.parametrize("path", ENDPOINTS)
def test_wrong_method_is_a_405_naming_the_allowed_one(shared_server: Server, path: str) -> None:
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        response = requests.request(method, shared_server.base + path,
                                    headers=shared_server.headers(), timeout=10)
        assert response.status_code == 405
        assert response.headers["Allow"] == "POST"
        assert "POST" in response.json()["error"]


def test_health_takes_only_get(shared_server: Server) -> None:
    assert requests.post(shared_server.base + "/health", timeout=10).status_code == 405


def test_unknown_path_is_a_json_404(shared_server: Server) -> None:
    response = requests.get(shared_server.base + "/ingest/nothing", timeout=10)
    assert response.status_code == 404
    assert "/ingest/nothing" in response.json()["error"]


@pytest.mark.parametrize("path", ["/ingest/errors", "/ingest/errors/batch", "/ingest/deploys",
                                  "/ingest/requests"])
@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "application/x-protobuf"])
def test_custom_endpoints_take_only_json(shared_server: Server, path: str,
                                         content_type: str | None) -> None:
    headers = {"Authorization": f"Bearer {shared_server.key}"}
    if content_type:
        headers["Content-Type"] = content_type
    response = requests.post(shared_server.base + path, data=b'{"git_sha": "a"}',
                             headers=headers, timeout=10)
    assert response.status_code == 415
    assert "application/json" in response.json()["error"]


def test_json_with_charset_parameter_is_accepted(shared_server: Server) -> None:
    response = shared_server.post("/ingest/deploys", {"git_sha": "abc"},
                                  headers={"Content-Type": "application/json; charset=utf-8"})
    assert response.status_code == 202


def _limited(start: Callable[..., Server]) -> Server:
    return start(env={"SOUNDING_MAX_BODY_BYTES": "2000"})


def test_body_over_the_limit_is_a_413_and_stores_nothing(start: Callable[..., Server]) -> None:
    server = _limited(start)
    big = {"git_sha": "abc", "description": "x" * 3000}
    assert server.post("/ingest/deploys", big).status_code == 413
    small = {"git_sha": "abc", "description": "x" * 1000}
    assert server.post("/ingest/deploys", small).status_code == 202
    assert server.query("SELECT count(*) FROM deploys")[0][0] == 1


def test_chunked_body_over_the_limit_is_a_413(start: Callable[..., Server]) -> None:
    server = _limited(start)

    def chunks():  # no Content-Length: the limit must hold while streaming
        for _ in range(10):
            yield b" " * 500
        yield b'{"git_sha": "abc"}'

    response = requests.post(server.base + "/ingest/deploys", data=chunks(),
                             headers=server.headers(), timeout=10)
    assert response.status_code == 413


def test_compressed_body_that_inflates_past_the_limit_is_a_413(
        start: Callable[..., Server]) -> None:
    server = _limited(start)
    bomb = gzip.compress(b'{"git_sha": "abc", "description": "' + b"x" * 1_500_000 + b'"}')
    assert len(bomb) < 2000
    response = requests.post(server.base + "/ingest/deploys", data=bomb,
                             headers=server.headers(**{"Content-Encoding": "gzip"}), timeout=10)
    assert response.status_code == 413
    assert "after decompression" in response.json()["error"]
    ok = gzip.compress(b'{"git_sha": "abc"}')
    response = requests.post(server.base + "/ingest/deploys", data=ok,
                             headers=server.headers(**{"Content-Encoding": "gzip"}), timeout=10)
    assert response.status_code == 202


def test_unknown_content_encoding_is_a_415(shared_server: Server) -> None:
    response = requests.post(shared_server.base + "/ingest/deploys", data=b'{"git_sha": "a"}',
                             headers=shared_server.headers(**{"Content-Encoding": "compress"}),
                             timeout=10)
    assert response.status_code == 415


@pytest.mark.parametrize(("headers", "status"), [
    ({"Authorization": "Bearer wrong-key"}, 401),
    ({"Content-Encoding": "compress"}, 415),
    ({"Content-Encoding": "gzip"}, 400),  # not gzip: refused while the body streams in
])
def test_a_refusal_before_the_whole_body_is_read_says_the_connection_closes(
        shared_server: Server, headers: dict[str, str], status: int) -> None:
    """Tornado closes the connection after such an answer: saying so makes a keep-alive
    client (an SDK's connection pool) send its next request on a new connection,
    instead of down the closed one, where it was lost (found by
    tests/fuzz/test_fuzz_sentry.py). An answer given after the body keeps it open."""
    with requests.Session() as session:
        refused = session.post(shared_server.base + "/ingest/deploys", data=b"x" * 2000,
                               headers=shared_server.headers(**headers), timeout=10)
        assert refused.status_code == status, refused.text
        assert refused.headers["Connection"] == "close"
        invalid = session.post(shared_server.base + "/ingest/deploys", data=b"{",
                               headers=shared_server.headers(), timeout=10)
        assert invalid.status_code == 400
        assert "Connection" not in invalid.headers
        accepted = session.post(shared_server.base + "/ingest/deploys",
                                json={"git_sha": "abc"}, headers=shared_server.headers(),
                                timeout=10)
        assert accepted.status_code == 202
