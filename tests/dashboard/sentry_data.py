"""A Sentry error event as an SDK sends it (a chained exception with source context,
tags, user, request, contexts and breadcrumbs), sent through the real Sentry door."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from typing import Any

from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import post_envelope, start_sentry
from tests.support.server import Server


def start_dash_sentry(start: Callable[..., Server], db_url: str | None = None) -> Server:
    """A collector with a Sentry-style key for project acme and a known admin token."""
    return start_sentry(start, db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})


def frame(filename: str, function: str, lineno: int, in_app: bool,
          context: tuple[list[str], str, list[str]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"filename": filename, "abs_path": "/srv/" + filename,
                           "function": function, "lineno": lineno, "in_app": in_app}
    if context is not None:
        out["pre_context"], out["context_line"], out["post_context"] = context
    return out


EVENT: dict[str, Any] = {
    "platform": "python", "level": "error", "environment": "production",
    "release": "shop@2.4.0", "server_name": "web-1", "transaction": "/checkout",
    "tags": {"browser": "Firefox 128", "os": "Linux", "customer": "gold"},
    "exception": {"values": [
        {"type": "KeyError", "value": "'42'", "module": "builtins",
         "mechanism": {"type": "chained", "source": "__context__", "exception_id": 1,
                       "parent_id": 0},
         "stacktrace": {"frames": [
             frame("app/orders.py", "find_order", 12, True,
                   (["def find_order(orders, order_id):", "    # the cache first"],
                    "    return orders[order_id]", ["", "def load_order(order_id):"]))]}},
        {"type": "LookupError", "value": "order 42 not found",
         "mechanism": {"type": "generic", "handled": True, "exception_id": 0},
         "stacktrace": {"frames": [
             frame("site-packages/flask/app.py", "dispatch", 880, False,
                   (["    try:"], "        return view(**args)", ["    except Exception:"])),
             frame("app/views.py", "checkout", 30, True,
                   (["def checkout(order_id):"], "    order = load_order(order_id)",
                    ["    return render(order)"])),
             frame("app/orders.py", "load_order", 17, True,
                   (["    try:", "        return find_order(ORDERS, order_id)",
                     "    except KeyError:"],
                    "        raise LookupError(f\"order {order_id} not found\")", []))]}},
    ]},
    "user": {"id": "user-7", "email": "ada@example.com", "ip_address": "10.0.0.7"},
    "request": {"method": "POST", "url": "https://shop.example/checkout",
                "query_string": "step=pay", "data": {"order": 42},
                "headers": {"User-Agent": "Firefox/128.0", "Accept": "text/html"}},
    "contexts": {"browser": {"name": "Firefox", "version": "128.0"},
                 "os": {"name": "Linux"},
                 "runtime": {"name": "CPython", "version": "3.11.9"},
                 "trace": {"trace_id": "0af7651916cd43dd8448eb211c80319c",
                           "span_id": "b7ad6b7169203331"}},
    "breadcrumbs": {"values": [
        {"timestamp": 1_763_632_800.25, "category": "http", "level": "info",
         "message": "GET /cart", "data": {"status_code": 200}},
        {"timestamp": "2025-11-20T10:00:01.500Z", "category": "query", "level": "warning",
         "message": "SELECT * FROM orders WHERE id = 42"},
    ]},
}


def sentry_event(**overrides: Any) -> dict[str, Any]:
    event = copy.deepcopy(EVENT)
    event["event_id"] = uuid.uuid4().hex
    event.update(overrides)
    return event


def post_event(server: Server, event: dict[str, Any]) -> None:
    body = envelope({"event_id": event["event_id"]}, [item("event", event)])
    response = post_envelope(server, body, key=server.key,
                             project=server.project_id())
    assert response.status_code == 200, response.text
