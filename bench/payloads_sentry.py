"""Sentry envelopes for the benchmark, shaped as the Python sentry-sdk sends them
(tests/receiver/sentry/sentry_sdk_client.py records the real ones): built once,
made unique per request by writing the request number into the event id and the
trace id, so that no event is taken for a retry (the store keeps one copy of an
event id) and no span for one already stored.

- `sentry_event`: one envelope, one error event (a chained exception with in-app
  frames and source context, tags, user, request, breadcrumbs): about 3 KB.
- `sentry_mix`: what an SDK sends over time, in turn: an error event, a
  transaction of 8 spans with a client report, another transaction, an event
  with a client report. Each envelope carries one event or one transaction.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable
from typing import Any

MARK = "feedfacecafebabe"  # 16 hex characters, replaced by the request number
EVENT_ID = MARK + "0123456789abcdef"
TRACE_ID = MARK + "00112233445566aa"
SDK = {"name": "sentry.python", "version": "2.75.0"}
SPANS_PER_TRANSACTION = 8


def _frame(function: str, lineno: int, context: str, in_app: bool = True) -> dict[str, Any]:
    path = "/srv/shop/orders.py" if in_app else "/usr/lib/python3.11/site-packages/lib.py"
    return {"filename": path.rsplit("/", 1)[-1], "abs_path": path, "function": function,
            "module": "shop.orders" if in_app else "lib", "lineno": lineno,
            "pre_context": ["def load_order(order_id):", "    try:"] if in_app else [],
            "context_line": context,
            "post_context": ["    except KeyError as exc:", "        raise"] if in_app else [],
            "vars": {"order_id": "'42'"}, "in_app": in_app}


def _event(now_s: float) -> dict[str, Any]:
    frames = [_frame("dispatch", 880, "return handler(request)", in_app=False),
              _frame("load_order", 43, "return find_order({}, order_id)"),
              _frame("find_order", 38, "return orders[order_id]")]
    return {
        "event_id": EVENT_ID, "timestamp": now_s, "platform": "python", "level": "error",
        "release": "shop@2.1.0", "environment": "production", "server_name": "web-1",
        "exception": {"values": [
            {"type": "KeyError", "value": "'42'", "module": None,
             "mechanism": {"type": "generic", "handled": True},
             "stacktrace": {"frames": frames[1:]}},
            {"type": "LookupError", "value": "order 42 not found", "module": None,
             "mechanism": {"type": "chained", "handled": True, "source": "__cause__"},
             "stacktrace": {"frames": frames[:2]}}]},
        "tags": {"service": "orders", "region": "eu-west-1"},
        "user": {"id": "user-42", "ip_address": "10.0.0.7"},
        "request": {"method": "GET", "url": "https://shop.example.com/orders/42",
                    "headers": {"User-Agent": "Mozilla/5.0", "Accept": "*/*"}},
        "contexts": {"trace": {"trace_id": TRACE_ID, "span_id": "1122334455667788"},
                     "runtime": {"name": "CPython", "version": "3.11.2"},
                     "os": {"name": "Linux", "version": "6.1"}},
        "breadcrumbs": {"values": [
            {"timestamp": now_s - 1, "category": "query", "message": "SELECT 1",
             "level": "info", "type": "default"}] * 5},
        "extra": {"cart": {"items": 3}},
        "sdk": SDK,
    }


def _transaction(now_s: float) -> dict[str, Any]:
    start = now_s - 0.25
    spans = [{"trace_id": TRACE_ID, "span_id": f"{i + 1:016x}",
              "parent_span_id": "a1b2c3d4e5f60718", "op": "db" if i % 2 else "http.client",
              "description": "SELECT * FROM orders WHERE id = %s" if i % 2
              else "GET https://payments.internal/charge",
              "start_timestamp": start + i * 0.01, "timestamp": start + i * 0.01 + 0.005,
              "status": "ok", "data": {"db.system": "postgresql"} if i % 2 else {},
              "origin": "auto"}
             for i in range(SPANS_PER_TRANSACTION - 1)]
    return {
        "event_id": EVENT_ID, "type": "transaction", "platform": "python",
        "transaction": "/orders/{id}", "transaction_info": {"source": "route"},
        "start_timestamp": start, "timestamp": now_s,
        "release": "shop@2.1.0", "environment": "production",
        "contexts": {"trace": {"trace_id": TRACE_ID, "span_id": "a1b2c3d4e5f60718",
                               "op": "http.server", "status": "ok"},
                     "response": {"status_code": 200}},
        "request": {"method": "GET", "url": "https://shop.example.com/orders/42"},
        "tags": {"service": "orders"}, "spans": spans, "sdk": SDK,
    }


def _client_report(now_s: float) -> dict[str, Any]:
    return {"timestamp": now_s, "discarded_events": [
        {"reason": "sample_rate", "category": "transaction", "quantity": 3}]}


def _envelope(items: list[tuple[str, dict[str, Any]]]) -> bytes:
    header = {"event_id": EVENT_ID, "sent_at": "2026-11-24T00:00:00.000000Z", "sdk": SDK}
    parts = [json.dumps(header, separators=(",", ":")).encode()]
    for kind, payload in items:
        body = json.dumps(payload, separators=(",", ":")).encode()
        item = {"type": kind, "content_type": "application/json", "length": len(body)}
        parts += [json.dumps(item, separators=(",", ":")).encode(), body]
    return b"\n".join(parts) + b"\n"


class Envelopes:
    """Envelope bodies made unique by request number (ids are written in place: the
    `length` of each item stays right)."""

    def __init__(self, bodies: list[bytes]) -> None:
        self.bodies = bodies
        self.offsets = [_offsets(body) for body in bodies]

    def render(self, n: int) -> bytes:
        index = n % len(self.bodies)
        out = bytearray(self.bodies[index])
        stamp = struct.pack(">Q", (n * 0x9E3779B97F4A7C15) & 0xFFFF_FFFF_FFFF_FFFF)
        text = stamp.hex().encode()
        for offset in self.offsets[index]:
            out[offset:offset + 16] = text
        return bytes(out)


def _offsets(body: bytes) -> list[int]:
    mark = MARK.encode()
    found, start = [], body.find(mark)
    while start >= 0:
        found.append(start)
        start = body.find(mark, start + 1)
    return found


def sentry_event(seed: int = 0) -> Envelopes:
    now = time.time()
    return Envelopes([_envelope([("event", _event(now))])])


def sentry_mix(seed: int = 0) -> Envelopes:
    now = time.time()
    return Envelopes([
        _envelope([("event", _event(now))]),
        _envelope([("transaction", _transaction(now)), ("client_report", _client_report(now))]),
        _envelope([("transaction", _transaction(now))]),
        _envelope([("event", _event(now)), ("client_report", _client_report(now))]),
    ])


def worker_bodies(make: Callable[[int], Envelopes]) -> Callable[[int], Callable[[int], bytes]]:
    def source(worker: int) -> Callable[[int], bytes]:
        envelopes = make(worker)
        # Unique across workers: the worker number sits above the request number.
        return lambda n: envelopes.render((worker << 40) | n)
    return source
