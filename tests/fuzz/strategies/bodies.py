"""Valid bodies of the JSON doors: the custom errors, deploys and requests, and
OTLP/JSON traces; each unique by a random marker so that a test finds its own rows."""

from __future__ import annotations

import uuid
from typing import Any


def marker() -> str:
    return uuid.uuid4().hex


def valid_error(fingerprint: str | None = None) -> dict[str, Any]:
    return {
        "exception_class": "ZeroDivisionError", "message": "division by zero",
        "backtrace": ["app.py:10 in divide", "app.py:3 in main"],
        "fingerprint": fingerprint or f"fuzz-{marker()}",
        "request_id": "req-1", "user_id": "u-42", "params": {"a": 1, "b": [0, {"c": "d"}]},
        "timestamp": "2026-11-21T10:00:00Z",
        "source_context": {"file": "app.py", "lineno": 10, "context_line": "    return a / b",
                           "pre_context": ["def divide(a, b):"], "post_context": [""]},
        "trace_id": "5b8efff798038103d269b633813fc60c", "span_id": "eee19b7ec3c1b174",
    }


def valid_deploy() -> dict[str, Any]:
    return {"git_sha": "9f1c2ab", "version": "1.4.2", "env": "production", "deployer": "ci",
            "description": "Faster checkout", "service": "shop",
            "timestamp": "2026-11-21T09:00:00Z"}


def valid_request(route: str | None = None) -> dict[str, Any]:
    return {"method": "GET", "route": route or f"/fuzz/{marker()}", "status": 200,
            "duration_ms": 12.5, "timestamp": "2026-11-21T10:00:00Z", "service": "shop",
            "env": "production", "request_id": "req-1",
            "trace_id": "5b8efff798038103d269b633813fc60c"}


def json_span(trace_id: str | None = None, span_id: str = "eee19b7ec3c1b174") -> dict[str, Any]:
    return {
        "traceId": trace_id or marker(), "spanId": span_id, "parentSpanId": "",
        "name": "GET /orders/:id", "kind": 2,
        "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000120000000",
        "attributes": [
            {"key": "http.request.method", "value": {"stringValue": "GET"}},
            {"key": "http.route", "value": {"stringValue": "/orders/:id"}},
            {"key": "http.response.status_code", "value": {"intValue": "200"}},
            {"key": "a.double", "value": {"doubleValue": 0.25}},
            {"key": "a.list", "value": {"arrayValue": {"values": [{"boolValue": True}]}}},
            {"key": "a.map", "value": {"kvlistValue": {"values": [
                {"key": "k", "value": {"bytesValue": "AAE="}}]}}},
        ],
        "events": [{"name": "exception", "timeUnixNano": "1700000000100000000",
                    "attributes": [{"key": "exception.type",
                                    "value": {"stringValue": "ValueError"}},
                                   {"key": "exception.message",
                                    "value": {"stringValue": "bad"}}]}],
        "status": {"code": 2, "message": "failed"},
    }


def json_traces(*spans: dict[str, Any], service: str = "fuzz") -> dict[str, Any]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "fuzz"}, "spans": list(spans)}]}]}
