"""Sentry events for the decoder's tests (test_event*.py): the shape @sentry/node sends,
and the check that a decoded error is within the store's limits. What the real Python
SDK sends is the `sdk` fixture (conftest.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from model.records import Batch, ErrorEvent
from processors.grouping import GroupingProcessor
from receiver.sentry.event import decode_event
from receiver.sentry.values import MAX_LABEL, MAX_TAG_KEY, MAX_TAG_VALUE, MAX_TAGS
from storage.wire.batch import encode_checked

NOW_US = 1_800_000_000_000_000
CLIENT = Path(__file__).with_name("sentry_sdk_client.py")


def chained(sdk: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(sdk["events"][0])


NODE_STACK = """Error: payment declined
    at charge (/app/src/payments.js:42:11)
    at processTicksAndRejections (node:internal/process/task_queues:95:5)"""


def node_event() -> dict[str, Any]:
    """@sentry/node's shape: frames outermost first, node internals not in-app."""
    return {
        "event_id": "7B7BC1B4-4F3A-4E6C-9D1E-0A2B3C4D5E6F", "platform": "node",
        "timestamp": 1_790_000_000.25, "level": "error", "environment": "staging",
        "release": "api@3.0.0", "server_name": "api-2",
        "exception": {"values": [{
            "type": "Error", "value": "payment declined",
            "mechanism": {"type": "onunhandledrejection", "handled": False},
            "stacktrace": {"frames": [
                {"filename": "node:internal/process/task_queues", "module": "task_queues",
                 "function": "processTicksAndRejections", "lineno": 95, "colno": 5,
                 "in_app": False},
                {"filename": "/app/src/payments.js", "abs_path": "/app/src/payments.js",
                 "module": "payments", "function": "charge", "lineno": 42, "colno": 11,
                 "in_app": True, "pre_context": ["async function charge(card) {"],
                 "context_line": "  throw new Error('payment declined');",
                 "post_context": ["}"]},
                {"filename": "/app/node_modules/stripe/lib/x.js", "function": "wrap",
                 "lineno": 7, "colno": 3, "in_app": False}]}}]},
        "contexts": {"trace": {"trace_id": "AB" * 16, "span_id": "cd" * 8},
                     "os": {"name": "Linux", "version": "6.1"},
                     "runtime": {"name": "node", "version": "v20.11.0"}},
        "tags": [["request_id", "req-9"], ["region", "eu"]],
        "user": {"ip_address": "10.0.0.7"},
        "breadcrumbs": [{"category": "http", "data": {"url": "/pay"}}],
    }


def grouped(error: ErrorEvent) -> ErrorEvent:
    """`error` with the fingerprint the grouping processor decides, as in the pipeline."""
    GroupingProcessor("grouping").process(Batch(1, errors=[error]))
    return error


def decoded(event: dict[str, Any], now_us: int) -> ErrorEvent:
    """The event as the door decodes it, grouped as the pipeline groups it."""
    return grouped(decode_event(event, now_us))


def assert_storable(error: ErrorEvent) -> None:
    assert len(error.fingerprint) == 32
    for value in (error.environment, error.release, error.service):
        assert value is None or 0 < len(value) <= MAX_LABEL
    assert error.level in ("fatal", "error", "warning", "info", "debug")
    assert error.trace_id is None or len(error.trace_id) == 32
    assert error.span_id is None or len(error.span_id) == 16
    assert error.occurrence_key is None or len(error.occurrence_key) == 32
    assert len(error.tags or {}) <= MAX_TAGS
    assert all(len(k) <= MAX_TAG_KEY and len(v) <= MAX_TAG_VALUE
               for k, v in (error.tags or {}).items())
    assert len(error.exceptions or []) <= 10
    # Every JSON part serialises as the store writes it (no NaN, nothing but JSON).
    json.dumps([error.params, error.exceptions, error.context, error.tags, error.backtrace],
               allow_nan=False)
    wire, dropped = encode_checked(Batch(project_id=1, errors=[error]))
    assert dropped == {} and len(wire.errors) == 1
