"""The budget of bytes held by bodies being read (receiver/http/body.py) and the cap on
open connections (receiver/http/connections.py), with real sockets against the real
collector: slow compressed bodies cannot grow it past the budget."""

from __future__ import annotations

import gzip
import json
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path

import requests

from tests.receiver.test_errors import error
from tests.support.server import Server

MiB = 1024 * 1024
INFLATED = 5_000_000  # each slow body inflates to this, under the 5 MiB body limit


def _rss_kib(pid: int) -> int:
    match = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    assert match
    return int(match.group(1))


def _metric(server: Server, name: str) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(rf'^{name}{{receiver="http"}} (\S+)$', text, re.M)
    return float(match.group(1)) if match else 0.0


def _open(server: Server) -> socket.socket:
    host, port = server.base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _head(server: Server, length: int, encoding: str = "gzip") -> bytes:
    return (f"POST /ingest/errors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\n"
            f"Content-Type: application/json\r\nContent-Encoding: {encoding}\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def _answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed without an answer: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    while len(rest) < int(headers.get("content-length", 0)):
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return int(lines[0].split()[1]), headers, rest


def test_slow_compressed_bodies_are_refused_past_the_budget_and_memory_stays_bounded(
        start: Callable[..., Server]) -> None:
    """Small gzip bodies that inflate to 5 MB each, their last byte withheld: three
    fit a 16 MiB budget; every further one is answered 503 + Retry-After as soon as
    it passes the budget, the collector's RSS grows by the budget and a margin,
    not by 5 MB a connection, and once the held bodies end the budget is free."""
    server = start(env={"SOUNDING__RECEIVERS__HTTP__MAX_INFLIGHT_BODY_BYTES": str(16 * MiB)})
    padding = INFLATED - len(json.dumps(error(message="")))
    body = gzip.compress(json.dumps(error(message="x" * padding)).encode())
    assert len(body) < 16_000
    assert server.post("/ingest/errors", error()).status_code == 202  # warmed up
    rss_before = _rss_kib(server.proc.pid)

    held: list[socket.socket] = []
    for i in range(3):
        sock = _open(server)
        sock.sendall(_head(server, len(body)) + body[:-1])
        held.append(sock)
        deadline = time.monotonic() + 10
        while _metric(server, "sounding_inflight_body_bytes") < (i + 1) * (INFLATED - 64 * 1024):
            assert time.monotonic() < deadline, "the body was not inflated as it came"
            time.sleep(0.05)
    refused = []
    for _ in range(12):
        sock = _open(server)
        sock.sendall(_head(server, len(body)) + body[:-1])
        sock.settimeout(5)
        try:
            refused.append(_answer(sock))
        except TimeoutError:
            refused.append((0, {}, b"no answer: the body is held"))
            held.append(sock)
        else:
            sock.close()
    grown_mib = (_rss_kib(server.proc.pid) - rss_before) / 1024

    assert grown_mib < 16 + 24, f"the collector grew by {grown_mib:.0f} MiB"
    for status, headers, text in refused:
        assert status == 503, text
        assert headers["retry-after"] == "1"
        assert b"too many request bodies" in text

    for sock in held:
        sock.sendall(body[-1:])
        status, _, text = _answer(sock)
        assert status < 500, text  # whatever the body rules say of a 5 MB message
        sock.close()
    deadline = time.monotonic() + 10
    while _metric(server, "sounding_inflight_body_bytes") != 0:
        assert time.monotonic() < deadline, "the budget was not given back"
        time.sleep(0.05)
    assert server.post("/ingest/errors", error()).status_code == 202


def test_a_body_too_large_for_the_budget_left_is_refused_before_it_is_read(
        start: Callable[..., Server]) -> None:
    """A Content-Length that cannot fit what is left of the budget: 503 once the
    body is in (read and dropped, not kept), with the connection left usable."""
    server = start(env={"SOUNDING__RECEIVERS__HTTP__MAX_INFLIGHT_BODY_BYTES": str(1 * MiB)})
    holder = _open(server)
    first = b"x" * (MiB // 2)
    holder.sendall(_head(server, len(first) + 1, "identity") + first)
    time.sleep(0.5)
    second = json.dumps(error(message="y" * (MiB // 2 + 1000))).encode()
    response = requests.post(server.base + "/ingest/errors", data=second, timeout=10,
                             headers=server.headers())
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"
    holder.close()


def test_past_max_connections_a_new_connection_is_answered_503(
        start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING__RECEIVERS__HTTP__MAX_CONNECTIONS": "4"})
    idle = [_open(server) for _ in range(4)]
    deadline = time.monotonic() + 10
    extra = _open(server)
    extra.sendall(_head(server, 2, "identity") + b"{}")
    status, headers, text = _answer(extra)
    assert status == 503, text
    assert headers["retry-after"] == "1"
    assert b"too many open connections" in text
    assert extra.recv(1024) == b""  # then closed
    extra.close()
    idle.pop().close()
    while True:  # the slot is free once the collector has seen the close
        try:
            if requests.get(server.base + "/health", timeout=10).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        assert time.monotonic() < deadline, "a freed connection slot was not reused"
        time.sleep(0.05)
    for sock in idle:
        sock.close()
