"""receiver/sentry/exceptions.py, frames.py and grouping.py, through decode_event: an
event's exception chain and its frames (kept in order, bounded), its backtrace and
source context, and the group it joins, alike from Sentry's SDKs and OpenTelemetry's."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from model.fingerprint import fingerprint as text_fingerprint
from model.fingerprint import frame_fingerprint
from processors.exceptions import exception_error
from tests.receiver.sentry.events import (
    CLIENT,
    NODE_STACK,
    NOW_US,
    chained,
    decoded,
    grouped,
    node_event,
)
from tests.support import clients

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)


def test_sdk_exception_keeps_its_chain_root_cause_first(sdk: dict[str, Any]) -> None:
    error = decoded(chained(sdk), NOW_US)
    assert error.exception_class == "LookupError"
    assert error.message == "order 42 not found"
    assert error.exceptions is not None
    assert [e["type"] for e in error.exceptions] == ["KeyError", "LookupError"]
    assert error.exceptions[0]["value"] == "'42'"
    assert error.exceptions[1]["mechanism"] == {"type": "generic", "handled": True}
    frames = error.exceptions[0]["frames"]
    assert [f["function"] for f in frames] == ["load_order", "find_order"]  # outermost first
    assert frames[-1]["in_app"] is True
    assert frames[-1]["abs_path"] == str(CLIENT)
    assert frames[-1]["context_line"].strip() == "return orders[order_id]"
    assert all("vars" not in f for e in error.exceptions for f in e["frames"])


def test_sdk_backtrace_is_the_raised_exception_innermost_first_as_python_prints_it(
        sdk: dict[str, Any]) -> None:
    error = decoded(chained(sdk), NOW_US)
    raised = chained(sdk)["exception"]["values"][-1]["stacktrace"]["frames"]
    assert error.backtrace == [f'File "{CLIENT}", line {f["lineno"]}, in {f["function"]}'
                               for f in reversed(raised)]
    assert error.backtrace[0].endswith("in load_order")


def test_sdk_source_context_is_the_innermost_in_app_frame(sdk: dict[str, Any]) -> None:
    error = decoded(chained(sdk), NOW_US)
    assert error.source_context is not None
    assert error.source_context.file == str(CLIENT)
    assert "raise LookupError" in error.source_context.context_line
    assert error.source_context.pre_context and error.source_context.post_context


def test_logged_messages_group_by_their_template_not_their_parameters(
        sdk: dict[str, Any]) -> None:
    logged = sdk["events"][2]
    assert logged["logentry"]["message"] == "payment %s declined"
    error = decoded(logged, NOW_US)
    assert error.message == "payment p-7 declined"
    other = copy.deepcopy(logged)
    other["logentry"].update(formatted="payment q-9 declined", params=["q-9"])
    assert decoded(other, NOW_US).fingerprint == error.fingerprint
    assert error.fingerprint == frame_fingerprint("Message", "", "payment %s declined")


def test_fingerprint_array_expands_default(sdk: dict[str, Any]) -> None:
    event = copy.deepcopy(sdk["events"][3])
    assert event["fingerprint"] == ["{{ default }}", "payments"]
    custom = decoded(event, NOW_US).fingerprint
    del event["fingerprint"]
    default = decoded(event, NOW_US).fingerprint
    assert custom == hashlib.sha256(f"{default}\npayments".encode()).hexdigest()[:32]
    event["fingerprint"] = ["{{default}}"]
    assert decoded(event, NOW_US).fingerprint == default
    event["fingerprint"] = ["checkout", 42]
    assert decoded(event, NOW_US).fingerprint == \
        hashlib.sha256(b"checkout\n42").hexdigest()[:32]
    event["fingerprint"] = "not an array"
    assert decoded(event, NOW_US).fingerprint == default


def test_same_python_exception_groups_alike_from_sentry_and_opentelemetry(
        sdk: dict[str, Any]) -> None:
    from_sentry = decoded(chained(sdk), NOW_US)
    from_otel = exception_error(sdk["otel_exception"], {}, 1, None, None, "orders", {}, {})
    assert from_otel is not None
    grouped(from_otel)
    assert from_sentry.fingerprint == from_otel.fingerprint


def test_node_event_backtrace_is_v8_form_and_groups_like_the_otlp_js_exporter() -> None:
    error = decoded(node_event(), NOW_US)
    assert error.backtrace == [
        "at wrap (/app/node_modules/stripe/lib/x.js:7:3)",
        "at charge (/app/src/payments.js:42:11)",
        "at processTicksAndRejections (node:internal/process/task_queues:95:5)"]
    # The innermost in-app frame is what the OTLP JavaScript exporter's text shows on top.
    assert error.fingerprint == text_fingerprint("Error", NODE_STACK, "payment declined")
    assert error.source_context is not None and error.source_context.lineno == 42


def test_chains_frames_and_text_are_bounded() -> None:
    frames = [{"function": f"f{i}", "filename": "a.py", "lineno": i + 1,
               "context_line": "x" * 5000, "pre_context": [str(n) for n in range(30)],
               "post_context": [str(n) for n in range(30)]} for i in range(300)]
    chain = [{"type": f"E{i}", "value": "v" * 10_000} for i in range(15)]
    chain[-1]["stacktrace"] = {"frames": frames}
    error = decoded({"exception": {"values": chain}}, NOW_US)
    assert error.exceptions is not None
    assert [e["type"] for e in error.exceptions] == ["E0"] + [f"E{i}" for i in range(6, 15)]
    kept = error.exceptions[-1]["frames"]
    assert len(kept) == 250
    assert [f["function"] for f in kept[:11]] == [f"f{i}" for i in range(10)] + ["f60"]
    assert kept[-1]["function"] == "f299" and len(error.backtrace) == 250
    assert len(kept[-1]["context_line"]) == 1000
    assert kept[-1]["pre_context"] == [str(n) for n in range(10, 30)]
    assert kept[-1]["post_context"] == [str(n) for n in range(20)]
    assert len(error.message) == 8192
