"""Sentry envelopes for the benchmark, shaped as the Python sentry-sdk sends them
(tests/receiver/sentry/sentry_sdk_client.py records the real ones): built once,
made unique per request by writing the request number into the event id and the
trace id, so that no event is taken for a retry (the store keeps one copy of an
event id) and no span for one already stored.

- `sentry_event`: one envelope, one error event as sentry-sdk sends an unhandled
  exception of a web request (10 frames with source context and variables, 10
  breadcrumbs, contexts, request, modules): about 10 KB.
- `sentry_mix`: what an SDK sends over time, in turn: an error event, a
  transaction of 8 spans with a client report, another transaction, an event
  with a client report. Each envelope carries one event or one transaction.
- `sentry_sessions`: release health (docs/release-health.md), in turn: a whole
  session in one update (sentry-sdk's application mode: `init` and exited), a
  session's last update (exited with an error), one crashing, and a `sessions`
  aggregate of two minutes' requests as a server SDK flushes it. One session item
  an envelope, each adding two marks (a start and an end, or two buckets); the
  session ids and the envelope's bytes are unique per request, so each counts.
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


# The application of the event: a Flask view calling a service that fails in the
# database layer. (module, function, lineno, source lines around it, in_app)
_STACK = (
    ("flask.app", "wsgi_app", 1511, "response = self.full_dispatch_request()", False),
    ("flask.app", "full_dispatch_request", 919, "rv = self.dispatch_request()", False),
    ("flask.app", "dispatch_request", 902,
     "return self.ensure_sync(self.view_functions[rule.endpoint])(**view_args)", False),
    ("shop.api.views", "post_order", 141, "order = orders.place_order(cart, user=g.user)",
     True),
    ("shop.services.orders", "place_order", 88,
     "total = pricing.total(cart, currency=user.currency)", True),
    ("shop.services.pricing", "total", 57, "rate = self.rates.load(currency)", True),
    ("shop.services.rates", "load", 33, "row = self.repo.find_rate(currency, day=today())",
     True),
    ("shop.db.repository", "find_rate", 72, "return self.session.execute(query).one()", True),
    ("sqlalchemy.engine.result", "one", 1812, "return self._only_one_row(True, True, False)",
     False),
    ("sqlalchemy.engine.result", "_only_one_row", 760,
     'raise exc.NoResultFound("No row was found when one was required")', False),
)
FRAMES = len(_STACK)
BREADCRUMBS = 10


def _frame(module: str, function: str, lineno: int, line: str, in_app: bool
           ) -> dict[str, Any]:
    """A frame as sentry-sdk sends it: five lines of source each side, local variables."""
    path = module.replace(".", "/") + ".py"
    root = "/srv/shop/" if in_app else "/usr/local/lib/python3.11/site-packages/"
    indent = "        "
    return {
        "filename": path, "abs_path": root + path, "function": function, "module": module,
        "lineno": lineno,
        "pre_context": [f"    def {function}(self, *args):", f"{indent}started = time.monotonic()",
                        f"{indent}log.debug('%r', args)", f"{indent}if self.closed:",
                        f"{indent}    raise Closed()"],
        "context_line": indent + line,
        "post_context": [f"{indent}self.timer.observe(started)", f"{indent}return result", "",
                         "    def close(self):", f"{indent}self.closed = True"],
        "vars": {"self": f"<{module.rsplit('.', 1)[-1].title()} object at 0x7f3a2c1b4e50>",
                 "currency": "'EUR'"},
        "in_app": in_app,
    }


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + \
        f".{int(seconds % 1 * 1e6):06d}Z"


def _event(now_s: float) -> dict[str, Any]:
    """An unhandled exception in a web request, as sentry-sdk 2 sends it (captured from
    the real SDK behind its WSGI integration, then written out here): 10 frames with
    source context and variables, 10 breadcrumbs, the trace, runtime and OS contexts,
    the request, the installed modules: about 10 KB."""
    return {
        "level": "error", "platform": "python", "event_id": EVENT_ID,
        "timestamp": _iso(now_s),
        "exception": {"values": [{
            "type": "NoResultFound", "value": "No row was found when one was required",
            "module": "sqlalchemy.exc", "mechanism": {"type": "wsgi", "handled": False},
            "stacktrace": {"frames": [_frame(*f) for f in _STACK]}}]},
        "breadcrumbs": {"values": [
            {"timestamp": _iso(now_s - 1 + i / 20), "type": "default", "category": "query",
             "level": "info", "message": f"SELECT value FROM rates WHERE currency = %(c_{i})s",
             "data": {"db.system": "postgresql"}}
            for i in range(BREADCRUMBS)]},
        "contexts": {
            "trace": {"trace_id": TRACE_ID, "span_id": "b678ec06b1048340",
                      "parent_span_id": None, "op": "http.server", "description": None,
                      "origin": "auto.http.flask",
                      "data": {"thread.id": "140102048988032", "thread.name": "MainThread"}},
            "runtime": {"name": "CPython", "version": "3.11.7",
                        "build": "3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0]"},
            "os": {"name": "Linux", "version": "6.1.0-28-cloud-amd64"},
            "flask": {"app": "shop.api", "debug": False}},
        "user": {"id": "user-42", "email": "ada@example.com", "ip_address": "203.0.113.9"},
        "transaction": "/api/orders", "transaction_info": {"source": "url"},
        "tags": {"service": "orders", "region": "eu-west-1"},
        "extra": {"sys.argv": ["/srv/shop/.venv/bin/gunicorn", "shop.api:app"]},
        "modules": {name: version for name, version in (
            ("flask", "3.1.0"), ("werkzeug", "3.1.3"), ("sqlalchemy", "2.0.36"),
            ("psycopg", "3.2.3"), ("gunicorn", "23.0.0"), ("sentry-sdk", "2.75.0"),
            ("jinja2", "3.1.4"), ("itsdangerous", "2.2.0"), ("click", "8.1.7"),
            ("markupsafe", "3.0.2"), ("blinker", "1.9.0"), ("redis", "5.2.0"),
            ("requests", "2.32.3"), ("urllib3", "2.2.3"), ("certifi", "2024.8.30"),
            ("pydantic", "2.10.2"), ("typing-extensions", "4.12.2"), ("greenlet", "3.1.1"))},
        "request": {"url": "https://shop.example.com/api/orders", "method": "POST",
                    "query_string": "source=cart",
                    "env": {"SERVER_NAME": "shop.example.com", "SERVER_PORT": "443"},
                    "headers": {"Host": "shop.example.com",
                                "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0",
                                "Accept": "application/json", "Content-Type": "application/json",
                                "Cookie": "[Filtered]", "X-Request-Id": "req-000281734"}},
        "release": "shop@2.1.0", "environment": "production", "server_name": "web-1",
        "sdk": {**SDK, "name": "sentry.python.flask",
                "packages": [{"name": "pypi:sentry-sdk", "version": SDK["version"]}],
                "integrations": ["argv", "atexit", "dedupe", "excepthook", "flask", "logging",
                                 "modules", "sqlalchemy", "stdlib", "threading"]},
        "_meta": {"request": {"headers": {"Cookie": {"": {"rem": [["!config", "s"]]}}}}},
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
    # The dynamic sampling context sentry-sdk puts in the header of what it sends.
    header = {"event_id": EVENT_ID, "sent_at": "2026-11-24T00:00:00.000000Z",
              "trace": {"trace_id": TRACE_ID, "sample_rand": "0.837326",
                        "environment": "production", "release": "shop@2.1.0",
                        "public_key": "0123456789abcdef0123456789abcdef",
                        "transaction": "/api/orders", "sample_rate": "1.0", "sampled": "true"}}
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


def _session(now_s: float, status: str, init: bool, errors: int = 0) -> dict[str, Any]:
    """A `session` update as @sentry/browser and sentry-sdk's application mode send it."""
    return {"sid": MARK + "5f4d7a8c9e0f1a2b", "did": "user-" + MARK[:6], "init": init,
            "started": _iso(now_s - 30), "timestamp": _iso(now_s), "status": status,
            "errors": errors, "duration": 30.0,
            "attrs": {"release": "shop@2.1.0", "environment": "production",
                      "user_agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"}}


def _aggregate(now_s: float) -> dict[str, Any]:
    """A `sessions` item as a server SDK flushes two minutes of request sessions."""
    minute = now_s // 60 * 60
    return {"attrs": {"release": "shop@2.1.0", "environment": "production"},
            "aggregates": [{"started": _iso(minute - 60), "exited": 57, "errored": 2,
                            "crashed": 1},
                           {"started": _iso(minute), "exited": 12}]}


def _session_envelope(kind: str, payload: dict[str, Any]) -> bytes:
    # The envelope header carries the request number too (its `sent_at` does in a
    # real SDK): a `sessions` item is counted once per envelope's bytes.
    header = {"sent_at": "2026-11-24T00:00:00.000000Z", "event_id": EVENT_ID, "sdk": SDK}
    body = json.dumps(payload, separators=(",", ":")).encode()
    item = {"type": kind, "length": len(body)}
    return b"\n".join([json.dumps(header, separators=(",", ":")).encode(),
                       json.dumps(item, separators=(",", ":")).encode(), body]) + b"\n"


def sentry_sessions(seed: int = 0) -> Envelopes:
    now = time.time()
    return Envelopes([
        _session_envelope("session", _session(now, "exited", True)),
        _session_envelope("session", _session(now, "exited", False, errors=1)),
        _session_envelope("session", _session(now, "crashed", True, errors=1)),
        _session_envelope("sessions", _aggregate(now)),
    ])


def worker_bodies(make: Callable[[int], Envelopes]) -> Callable[[int], Callable[[int], bytes]]:
    def source(worker: int) -> Callable[[int], bytes]:
        envelopes = make(worker)
        # Unique across workers: the worker number sits above the request number.
        return lambda n: envelopes.render((worker << 40) | n)
    return source
