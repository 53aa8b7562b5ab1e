"""Payloads for the dashboard tests, sent through the real ingest endpoints."""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime
from typing import Any

from tests.support.server import Server

ADMIN_TOKEN = "dashboard-test-admin-token-0123456789"
XSS = "<script>alert(1)</script>"


def iso(ts_s: float) -> str:
    return datetime.fromtimestamp(ts_s, tz=UTC).isoformat().replace("+00:00", "Z")


def error(fingerprint: str, **overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "exception_class": "ZeroDivisionError",
        "message": "division by zero",
        "backtrace": ["app/billing.py:42 in total", "app/views.py:10 in checkout"],
        "fingerprint": fingerprint,
        "request_id": "req-7",
        "user_id": "user-42",
        "params": {"cart": 17, "coupon": None},
        "source_context": {
            "file": "app/billing.py", "lineno": 42,
            "pre_context": ["def total(items, count):", "    subtotal = sum(items)"],
            "context_line": "    return subtotal / count",
            "post_context": ["", "def tax(amount):"],
        },
    }
    record.update(overrides)
    return record


def post_ok(server: Server, path: str, body: Any, key: str | None = None,
            headers: dict[str, str] | None = None) -> None:
    response = server.post(path, body, key=key, headers=headers or {})
    assert response.status_code == 202, response.text


def requests_between(start_s: float, end_s: float, per_minute: int, duration_ms: float,
                     error_every: int = 0, route: str = "/checkout", service: str = "shop",
                     env: str = "production") -> list[dict[str, Any]]:
    """`per_minute` request metrics in every minute of [start_s, end_s)."""
    items = []
    minute = int(start_s) // 60 * 60
    n = 0
    while minute < end_s:
        for i in range(per_minute):
            n += 1
            failed = error_every and n % error_every == 0
            items.append({"method": "GET", "route": route, "service": service, "env": env,
                          "status": 500 if failed else 200, "duration_ms": duration_ms,
                          "timestamp": iso(minute + 1 + i * 50 / per_minute)})
        minute += 60
    return items


def post_requests(server: Server, items: list[dict[str, Any]], key: str | None = None) -> None:
    for i in range(0, len(items), 5000):
        post_ok(server, "/ingest/requests", {"requests": items[i:i + 5000]}, key=key)


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": str(value)}}


def span(trace_id: str, name: str, start_ns: int, duration_ms: float, parent: str = "",
         kind: int = 1, error: bool = False, span_id: str | None = None,
         **attributes: Any) -> dict[str, Any]:
    return {
        "traceId": trace_id, "spanId": span_id or secrets.token_hex(8),
        "parentSpanId": parent, "name": name, "kind": kind,
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(start_ns + int(duration_ms * 1_000_000)),
        "attributes": [attr(k.replace("__", "."), v) for k, v in attributes.items()],
        "status": {"code": 2 if error else 1},
    }


def checkout_trace(start_s: float | None = None, service: str = "shop",
                   root_name: str = "GET /checkout", failing: bool = True
                   ) -> tuple[str, dict[str, Any]]:
    """A trace: server span > database query, search, message, HTTP call > custom."""
    trace_id = secrets.token_hex(16)
    t0 = int((start_s if start_s is not None else time.time() - 30) * 1e9)
    root = span(trace_id, root_name, t0, 120, kind=2, error=failing,
                http__method="GET", http__route="/checkout", http__status_code=500
                if failing else 200)
    rid = root["spanId"]
    children = [
        span(trace_id, "SELECT orders", t0 + 5_000_000, 30, rid, kind=3,
             db__system="postgresql", db__statement="SELECT * FROM orders WHERE id = ?"),
        span(trace_id, "search products", t0 + 40_000_000, 20, rid, kind=3,
             db__system="elasticsearch"),
        span(trace_id, "publish order.created", t0 + 62_000_000, 8, rid, kind=4,
             messaging__system="kafka", messaging__destination__name="orders"),
    ]
    call = span(trace_id, "POST payments", t0 + 72_000_000, 40, rid, kind=3,
                http__method="POST", url__full="http://payments/charge")
    inner = span(trace_id, "compute tax", t0 + 80_000_000, 10, call["spanId"],
                 error=failing, **{"tax.region": "EU"})
    body = {"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", service),
                                    attr("deployment.environment", "production")]},
        "scopeSpans": [{"scope": {"name": "tests"},
                        "spans": [root, *children, call, inner]}],
    }]}
    return trace_id, body


def log_record(body: Any, time_ns: int | None = None, severity: int = 9,
               severity_text: str = "INFO", trace_id: str = "", span_id: str = "",
               event_name: str = "", **attributes: Any) -> dict[str, Any]:
    """One OTLP/JSON log record; `body` a string, or an AnyValue dict as it is."""
    at = time_ns if time_ns is not None else time.time_ns()
    record: dict[str, Any] = {
        "timeUnixNano": str(at), "observedTimeUnixNano": str(at + 1000),
        "severityNumber": severity, "severityText": severity_text,
        "body": body if isinstance(body, dict) else {"stringValue": body},
        "attributes": [attr(k.replace("__", "."), v) for k, v in attributes.items()],
        "flags": 1 if trace_id else 0,
    }
    if trace_id:
        record["traceId"] = trace_id
    if span_id:
        record["spanId"] = span_id
    if event_name:
        record["eventName"] = event_name
    return record


def logs_body(records: list[dict[str, Any]], service: str = "shop",
              scope: str = "tests") -> dict[str, Any]:
    return {"resourceLogs": [{
        "resource": {"attributes": [attr("service.name", service),
                                    attr("deployment.environment.name", "production")]},
        "scopeLogs": [{"scope": {"name": scope}, "logRecords": records}],
    }]}
