"""A door's connection, on the real server over a real socket: connections kept
alive, pipelined requests, other routes on the same connection, 405 and HEAD, a bare
OPTIONS, and a client that leaves mid-body (receiver/http/base.py's DoorHandler, on
Tornado's HTTP/1 connection)."""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlsplit

from tests.support.server import Server

ERROR = {"exception_class": "ValueError", "message": "boom", "backtrace": ["app.py:1 in main"],
         "fingerprint": "exchange"}


def _connection(server: Server) -> http.client.HTTPConnection:
    url = urlsplit(server.base)
    assert url.hostname is not None and url.port is not None
    return http.client.HTTPConnection(url.hostname, url.port, timeout=10)


def _post_error(conn: http.client.HTTPConnection, key: str,
                method: str = "POST") -> http.client.HTTPResponse:
    conn.request(method, "/ingest/errors", body=json.dumps(ERROR),
                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    return conn.getresponse()


def test_requests_on_one_connection_are_each_answered_on_it(shared_server: Server) -> None:
    conn = _connection(shared_server)
    try:
        local = None
        for _ in range(5):
            response = _post_error(conn, shared_server.key)
            body = response.read()
            assert response.status == 202, body
            assert response.getheader("Connection") is None
            assert conn.sock is not None
            local = local or conn.sock.getsockname()
            assert conn.sock.getsockname() == local  # the same connection each time
        # Another route (the Application's) on the same connection, then a door again.
        conn.request("GET", "/health")
        health = conn.getresponse()
        assert health.status == 200
        health.read()
        again = _post_error(conn, shared_server.key)
        assert again.status == 202
        again.read()
    finally:
        conn.close()


def test_an_accepted_answer_has_the_headers_tornado_gave(shared_server: Server) -> None:
    conn = _connection(shared_server)
    try:
        response = _post_error(conn, shared_server.key)
        body = response.read()
        assert response.status == 202
        assert response.getheader("Server") == "sounding"
        assert response.getheader("Date")
        assert response.getheader("Content-Length") == str(len(body))
        # Tornado's default type, kept, on the door's empty 202.
        assert response.getheader("Content-Type") == "text/html; charset=UTF-8"
    finally:
        conn.close()


def test_pipelined_requests_are_answered_in_order(shared_server: Server) -> None:
    body = json.dumps(ERROR).encode()
    good = (f"POST /ingest/errors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            f"{shared_server.key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    unknown = b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"
    bad_type = (f"POST /ingest/errors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                f"{shared_server.key}\r\nContent-Type: text/csv\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    url = urlsplit(shared_server.base)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(good + unknown + good + bad_type)
        statuses: list[int] = []
        reader = sock.makefile("rb")
        while len(statuses) < 4:
            status_line = reader.readline()
            assert status_line, statuses
            statuses.append(int(status_line.split()[1]))
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            reader.read(length)
    # The 415 is answered before its body is read: the connection closes after it.
    assert statuses == [202, 404, 202, 415]


def test_a_method_a_door_does_not_take_is_a_405_and_head_gets_no_body(
        shared_server: Server) -> None:
    # Answered before the (empty) body is read, so Tornado closes each connection
    # after it, as it did when the doors were RequestHandlers.
    for method in ("PUT", "HEAD", "GET"):
        conn = _connection(shared_server)
        try:
            conn.request(method, "/ingest/errors")
            response = conn.getresponse()
            body = response.read()
            assert response.status == 405
            assert response.getheader("Allow") == "POST"
            if method == "HEAD":
                assert body == b""
            else:
                assert "is not allowed here" in json.loads(body)["error"]
        finally:
            conn.close()


def test_options_without_an_allowed_origin_is_a_bare_204(shared_server: Server) -> None:
    conn = _connection(shared_server)
    try:
        conn.request("OPTIONS", "/ingest/errors", headers={"Origin": "https://elsewhere"})
        response = conn.getresponse()
        assert response.read() == b""
        assert response.status == 204
        assert response.getheader("Access-Control-Allow-Origin") is None
        assert response.getheader("Content-Type") is None
    finally:
        conn.close()


def test_a_client_gone_mid_body_leaves_the_server_serving(shared_server: Server) -> None:
    url = urlsplit(shared_server.base)
    head = (f"POST /ingest/errors HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            f"{shared_server.key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 100000\r\n\r\n").encode()
    for _ in range(3):
        with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
            sock.sendall(head + b"{" * 5000)
    conn = _connection(shared_server)
    try:
        assert _post_error(conn, shared_server.key).status == 202
    finally:
        conn.close()
