"""The load generator: separate processes, keep-alive HTTP/1.1 on raw sockets.

Each process drives several connections from one `selectors` loop with request
bytes built before the clock starts, so a request costs the generator a
`send` and a few bytes of response parsing, far less than it costs the server.
Two modes:
- saturate: closed loop, every connection sends its next request as soon as the
  previous one is answered; the acknowledged records per second is the result.
- rate: open loop at a fixed request rate; a request's latency is measured from
  the moment it was due, not from when a connection was free, so a server that
  falls behind shows it (no coordinated omission).
"""

from __future__ import annotations

import os
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench import scenarios


@dataclass
class WorkerSpec:
    scenario: str
    worker: int
    host: str
    port: int
    key: str
    connections: int
    start_at: float  # time.time() when the measured window opens
    warmup: float
    duration: float
    rate: float = 0.0  # requests per second for this worker; 0 means saturate
    prebuild: int = 0  # bodies to build before the start (unique bodies only)
    # A connection answered 503 rests for RETRY_AFTER before its next request, as
    # OpenTelemetry exporters honour Retry-After (the request itself is not resent).
    honour_retry_after: bool = False


@dataclass
class WorkerResult:
    sent: int = 0
    acked_requests: int = 0  # all acknowledgements, warm-up included (for the stored count check)
    acked_records: int = 0
    window_acked_records: int = 0  # acknowledgements completed inside the measured window
    statuses: dict[int, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)  # seconds, measured window only
    cpu_seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    # How long after its load was to begin this worker was ready to send (bodies built,
    # connected): past the warm-up, the measured window opened without all the load.
    late: float = 0.0


RETRY_AFTER = 1.0  # what the collector sends in Retry-After
# What acknowledges a committed request: 202 on Sounding's and OTLP's doors, 200 with
# the event id on Sentry's.
ACKED = frozenset({200, 202})


class _Conn:
    __slots__ = ("sock", "out", "sent", "inbuf", "due", "records", "busy")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = memoryview(b"")
        self.sent = 0
        self.inbuf = bytearray()
        self.due = 0.0
        self.records = 0
        self.busy = False


def _connect(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


def _response(buf: bytearray) -> tuple[int, int, bool] | None:
    """(status, bytes consumed, close) once a whole response is in `buf`."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = bytes(buf[:end]).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1])
    length = 0
    close = False
    for line in head[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "connection" and value.strip().lower() == "close":
            close = True
    total = end + 4 + length
    if len(buf) < total:
        return None
    return status, total, close


def request_bytes(host: str, port: int, path: str, key: str, content_type: str,
                  body: bytes) -> bytes:
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {key}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


def run_worker(spec: WorkerSpec) -> WorkerResult:
    scenario = scenarios.SCENARIOS[spec.scenario]
    bodies = scenario.body_source(spec.worker)
    result = WorkerResult()

    def make(n: int) -> bytes:
        return request_bytes(spec.host, spec.port, scenario.path, spec.key,
                             scenario.content_type, bodies(n))

    # Popped from the end, so built last first: bodies go out in the order they were
    # made, as a client sends them (a series' cumulative metric points oldest first).
    prebuilt = [make(n) for n in range(spec.prebuild)][::-1] if spec.prebuild else []
    counter = [len(prebuilt)]
    cache: list[bytes] = [] if scenario.unique_bodies else [make(0)]

    def next_request() -> bytes:
        if cache:
            return cache[0]
        if prebuilt:
            return prebuilt.pop()
        counter[0] += 1
        return make(counter[0])

    cpu0 = time.process_time()
    selector = selectors.DefaultSelector()
    conns = [_Conn(_connect(spec.host, spec.port)) for _ in range(spec.connections)]
    idle = list(conns)
    resting: list[tuple[float, _Conn]] = []  # (until, connection), honour_retry_after
    begin = spec.start_at - spec.warmup
    end = spec.start_at + spec.duration
    result.late = max(0.0, time.time() - begin)
    while time.time() < begin:
        time.sleep(min(0.01, begin - time.time()))

    def send(conn: _Conn, due: float) -> None:
        data = next_request()
        conn.out, conn.sent, conn.due, conn.busy = memoryview(data), 0, due, True
        conn.records = scenario.records
        result.sent += 1
        _flush(conn)

    def _flush(conn: _Conn) -> None:
        try:
            while conn.sent < len(conn.out):
                conn.sent += conn.sock.send(conn.out[conn.sent:])
        except (BrokenPipeError, ConnectionResetError):
            # Refused before the body was read: the answer may be waiting to be read.
            conn.sent = len(conn.out)
        except BlockingIOError:
            selector.register(conn.sock, selectors.EVENT_WRITE, conn) \
                if conn.sock.fileno() not in selector.get_map() else \
                selector.modify(conn.sock, selectors.EVENT_WRITE, conn)
            return
        if conn.sock.fileno() in selector.get_map():
            selector.modify(conn.sock, selectors.EVENT_READ, conn)
        else:
            selector.register(conn.sock, selectors.EVENT_READ, conn)

    def finish(conn: _Conn, status: int, close: bool) -> None:
        now = time.time()
        result.statuses[status] = result.statuses.get(status, 0) + 1
        if status in ACKED:
            result.acked_requests += 1
            result.acked_records += conn.records
            if spec.start_at <= now <= end:
                result.window_acked_records += conn.records
        if spec.start_at <= conn.due <= end:
            result.latencies.append(now - conn.due)
        conn.busy = False
        conn.inbuf.clear()
        if close:
            if conn.sock.fileno() in selector.get_map():
                selector.unregister(conn.sock)
            conn.sock.close()
            conn.sock = _connect(spec.host, spec.port)
        if status == 503 and spec.honour_retry_after:
            resting.append((now + RETRY_AFTER, conn))
        else:
            idle.append(conn)

    def broken(conn: _Conn, why: str) -> None:
        """The server closed the connection: a request in flight has no answer
        (status 0); a server that refuses before reading the body does this."""
        if conn.busy:
            result.statuses[0] = result.statuses.get(0, 0) + 1
            if len(result.errors) < 5:
                result.errors.append(why)
        if conn.sock.fileno() in selector.get_map():
            selector.unregister(conn.sock)
        conn.sock.close()
        conn.sock = _connect(spec.host, spec.port)
        conn.busy = False
        conn.inbuf.clear()
        idle.append(conn)

    def on_event(conn: _Conn, events: int) -> None:
        try:
            if events & selectors.EVENT_WRITE:
                _flush(conn)
                return
            chunk = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            # The answer may have arrived before the reset: use it if it is whole.
            parsed = _response(conn.inbuf) if conn.inbuf else None
            if parsed is not None:
                finish(conn, parsed[0], True)
            else:
                broken(conn, f"{type(exc).__name__}: {exc}")
            return
        if not chunk:
            parsed = _response(conn.inbuf) if conn.inbuf else None
            if parsed is not None:
                finish(conn, parsed[0], True)
            else:
                broken(conn, "connection closed by the server")
            return
        conn.inbuf += chunk
        parsed = _response(conn.inbuf)
        if parsed is not None:
            finish(conn, parsed[0], parsed[2])

    interval = 1.0 / spec.rate if spec.rate else 0.0
    next_due = begin
    try:
        while True:
            now = time.time()
            if now >= end:
                break
            if resting and resting[0][0] <= now:
                idle.extend(c for until, c in resting if until <= now)
                resting[:] = [(until, c) for until, c in resting if until > now]
            # Hand out requests: all idle connections when saturating, on schedule otherwise.
            while idle and (not interval or next_due <= now):
                conn = idle.pop()
                send(conn, next_due if interval else now)
                next_due += interval
            # Wait for the next due request, or for an answer when every connection is busy.
            timeout = max(0.0, min(next_due - now, 0.05)) if interval and idle else 0.05
            for key, events in selector.select(timeout):
                on_event(key.data, events)
        # Let what is in flight finish so that acknowledgements are all counted.
        deadline = time.time() + 60
        while any(c.busy for c in conns) and time.time() < deadline:
            for key, events in selector.select(0.1):
                on_event(key.data, events)
    except OSError as exc:
        result.errors.append(f"{type(exc).__name__}: {exc}")
    for conn in conns:
        conn.sock.close()
    result.cpu_seconds = time.process_time() - cpu0
    return result


def run(specs: list[WorkerSpec], runner: Callable[[WorkerSpec], WorkerResult] = run_worker
        ) -> list[WorkerResult]:
    """Run the workers in separate processes and collect their results."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with context.Pool(len(specs)) as pool:
        return pool.map(runner, specs)


def merge(results: list[WorkerResult]) -> dict[str, Any]:
    statuses: dict[int, int] = {}
    for r in results:
        for status, n in r.statuses.items():
            statuses[status] = statuses.get(status, 0) + n
    latencies = sorted(x for r in results for x in r.latencies)
    return {
        "acked_requests": sum(r.acked_requests for r in results),
        "acked_records": sum(r.acked_records for r in results),
        "window_acked_records": sum(r.window_acked_records for r in results),
        "statuses": statuses,
        "latencies": latencies,
        "cpu_seconds": sum(r.cpu_seconds for r in results),
        "errors": [e for r in results for e in r.errors][:5],
        "late": max((r.late for r in results), default=0.0),
    }


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def cpu_count() -> int:
    return os.cpu_count() or 1
