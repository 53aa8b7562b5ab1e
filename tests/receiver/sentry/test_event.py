"""receiver/sentry/event.py: Sentry events, as real SDKs send them, become ErrorEvents.

The Python payloads are the real sentry-sdk's (sentry_sdk_client.py runs it with a
transport that records what it would send); the @sentry/node payload has the shape
Sentry's SDK documentation gives, with the frames the Node SDK sends."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from processors.exceptions import exception_error
from receiver.jsonbody import parse_json
from receiver.sentry.bounded import FILTERED
from receiver.sentry.event import decode_event
from receiver.sentry.values import MAX_LABEL, MAX_TAG_KEY, MAX_TAG_VALUE, MAX_TAGS
from sounding.errors import InvalidInput
from sounding.fingerprint import fingerprint as text_fingerprint
from sounding.fingerprint import frame_fingerprint
from sounding.records import Batch, ErrorEvent
from storage.wire import encode_checked
from tests.fuzz.strategies import Mutated, dumps, mutations

NOW_US = 1_800_000_000_000_000
CLIENT = Path(__file__).with_name("sentry_sdk_client.py")


@pytest.fixture(scope="module")
def sdk() -> dict[str, Any]:
    """What the real Python SDK sent: {"events": [chained exception, message, logged
    error, exception with a fingerprint], "otel_exception": {...}}."""
    out = subprocess.run([sys.executable, str(CLIENT)], capture_output=True, text=True,
                         check=True, timeout=60)
    captured: dict[str, Any] = json.loads(out.stdout)
    assert len(captured["events"]) == 4
    return captured



def chained(sdk: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(sdk["events"][0])


def test_sdk_exception_keeps_its_chain_root_cause_first(sdk: dict[str, Any]) -> None:
    error = decode_event(chained(sdk), NOW_US)
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
    error = decode_event(chained(sdk), NOW_US)
    raised = chained(sdk)["exception"]["values"][-1]["stacktrace"]["frames"]
    assert error.backtrace == [f'File "{CLIENT}", line {f["lineno"]}, in {f["function"]}'
                               for f in reversed(raised)]
    assert error.backtrace[0].endswith("in load_order")


def test_sdk_source_context_is_the_innermost_in_app_frame(sdk: dict[str, Any]) -> None:
    error = decode_event(chained(sdk), NOW_US)
    assert error.source_context is not None
    assert error.source_context.file == str(CLIENT)
    assert "raise LookupError" in error.source_context.context_line
    assert error.source_context.pre_context and error.source_context.post_context


def test_sdk_event_fields_become_the_record_fields(sdk: dict[str, Any]) -> None:
    event = chained(sdk)
    error = decode_event(event, NOW_US)
    assert error.level == "error"
    assert error.environment == "production" and error.release == "shop@2.1.0"
    assert error.service == "orders"  # the `service` tag
    assert error.user_id == "user-42"
    assert error.occurrence_key == event["event_id"]
    assert error.trace_id == event["contexts"]["trace"]["trace_id"]
    assert error.span_id == event["contexts"]["trace"]["span_id"]
    assert error.params is not None and error.params["cart"] == {"items": 3}
    assert error.tags is not None
    assert error.tags["service"] == "orders" and error.tags["server_name"] == "web-1"
    assert error.tags["runtime"].startswith("CPython 3.")
    assert error.tags["mechanism"] == "generic" and error.tags["handled"] == "yes"
    assert NOW_US - 10**13 < error.ts_us < NOW_US + 10**14  # its RFC 3339 timestamp
    assert error.context is not None
    assert error.context["user"]["email"] == "ada@example.com"
    assert error.context["sdk"]["name"].startswith("sentry.python")
    assert "modules" not in error.context


def test_sdk_message_is_a_message_event_at_info(sdk: dict[str, Any]) -> None:
    error = decode_event(sdk["events"][1], NOW_US)
    assert (error.exception_class, error.message, error.level) == ("Message", "cache warmed",
                                                                   "info")
    assert error.exceptions is None and error.backtrace == []
    assert error.fingerprint == frame_fingerprint("Message", "", "cache warmed")


def test_logged_messages_group_by_their_template_not_their_parameters(
        sdk: dict[str, Any]) -> None:
    logged = sdk["events"][2]
    assert logged["logentry"]["message"] == "payment %s declined"
    error = decode_event(logged, NOW_US)
    assert error.message == "payment p-7 declined"
    other = copy.deepcopy(logged)
    other["logentry"].update(formatted="payment q-9 declined", params=["q-9"])
    assert decode_event(other, NOW_US).fingerprint == error.fingerprint
    assert error.fingerprint == frame_fingerprint("Message", "", "payment %s declined")


def test_fingerprint_array_expands_default(sdk: dict[str, Any]) -> None:
    event = copy.deepcopy(sdk["events"][3])
    assert event["fingerprint"] == ["{{ default }}", "payments"]
    custom = decode_event(event, NOW_US).fingerprint
    del event["fingerprint"]
    default = decode_event(event, NOW_US).fingerprint
    assert custom == hashlib.sha256(f"{default}\npayments".encode()).hexdigest()[:32]
    event["fingerprint"] = ["{{default}}"]
    assert decode_event(event, NOW_US).fingerprint == default
    event["fingerprint"] = ["checkout", 42]
    assert decode_event(event, NOW_US).fingerprint == \
        hashlib.sha256(b"checkout\n42").hexdigest()[:32]
    event["fingerprint"] = "not an array"
    assert decode_event(event, NOW_US).fingerprint == default


def test_same_python_exception_groups_alike_from_sentry_and_opentelemetry(
        sdk: dict[str, Any]) -> None:
    from_sentry = decode_event(chained(sdk), NOW_US)
    from_otel = exception_error(sdk["otel_exception"], {}, 1, None, None, "orders", {}, {})
    assert from_otel is not None
    assert from_sentry.fingerprint == from_otel.fingerprint


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


def test_node_event_backtrace_is_v8_form_and_groups_like_the_otlp_js_exporter() -> None:
    error = decode_event(node_event(), NOW_US)
    assert error.backtrace == [
        "at wrap (/app/node_modules/stripe/lib/x.js:7:3)",
        "at charge (/app/src/payments.js:42:11)",
        "at processTicksAndRejections (node:internal/process/task_queues:95:5)"]
    # The innermost in-app frame is what the OTLP JavaScript exporter's text shows on top.
    assert error.fingerprint == text_fingerprint("Error", NODE_STACK, "payment declined")
    assert error.source_context is not None and error.source_context.lineno == 42


def test_node_event_fields() -> None:
    error = decode_event(node_event(), NOW_US)
    assert error.occurrence_key == "7b7bc1b44f3a4e6c9d1e0a2b3c4d5e6f"  # UUID, dashes gone
    assert error.trace_id == "ab" * 16 and error.span_id == "cd" * 8
    assert error.ts_us == 1_790_000_000_250_000
    assert error.request_id == "req-9" and error.user_id == "10.0.0.7"
    assert error.tags == {"request_id": "req-9", "region": "eu", "os": "Linux 6.1",
                          "runtime": "node v20.11.0", "server_name": "api-2",
                          "mechanism": "onunhandledrejection", "handled": "no"}
    assert error.service == "unknown_service:node"
    assert error.context is not None and error.context["breadcrumbs"] == [
        {"category": "http", "data": {"url": "/pay"}}]


def test_an_exception_with_only_a_value_is_an_error() -> None:
    error = decode_event({"exception": [{"value": "boom"}]}, NOW_US)
    assert (error.exception_class, error.message, error.level) == ("Error", "boom", "error")
    assert error.fingerprint == frame_fingerprint("", "", "boom")


@pytest.mark.parametrize(("level", "expected"), [
    ("warn", "warning"), ("WARNING", "warning"), ("critical", "fatal"), ("log", "info"),
    ("debug", "debug"), (30, "warning"), (50, "fatal"), ("loud", "error"), (True, "error"),
    (None, "error")])
def test_level_reads_as_sentry_reads_it(level: Any, expected: str) -> None:
    assert decode_event({"level": level, "exception": {"values": [{"type": "E"}]}},
                        NOW_US).level == expected


@pytest.mark.parametrize("user", [{"email": "a@b.c"}, {"username": "ada", "id": ""},
                                  {"ip_address": "::1"}])
def test_user_id_falls_back_to_email_username_and_address(user: dict[str, Any]) -> None:
    assert decode_event({"user": user}, NOW_US).user_id == next(v for v in user.values() if v)


@pytest.mark.parametrize("bad", ["zz" * 16, "ab" * 15, "0" * 32, 42, None, "a" * 40])
def test_ids_that_are_not_ids_are_dropped(bad: Any) -> None:
    error = decode_event({"event_id": bad, "contexts": {"trace": {"trace_id": bad,
                                                                  "span_id": bad}}}, NOW_US)
    assert (error.occurrence_key, error.trace_id, error.span_id) == (None, None, None)


@pytest.mark.parametrize(("timestamp", "expected"), [
    ("2026-11-21T10:00:00Z", 1_795_255_200_000_000), (1_795_255_200, 1_795_255_200_000_000),
    ("yesterday", NOW_US), (-5, NOW_US), (1e300, NOW_US), (10**400, NOW_US), (None, NOW_US)])
def test_timestamp_or_arrival_time(timestamp: Any, expected: int) -> None:
    assert decode_event({"timestamp": timestamp}, NOW_US).ts_us == expected


def test_browser_tag_from_context_or_user_agent() -> None:
    from_context = decode_event({"contexts": {"browser": {"name": "Firefox",
                                                          "version": "128.0"}}}, NOW_US)
    assert from_context.tags == {"browser": "Firefox 128.0"}
    chrome = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/126.0.0.0 Safari/537.36")
    from_header = decode_event({"request": {"headers": [["User-Agent", chrome]]}}, NOW_US)
    assert from_header.tags == {"browser": "Chrome 126"}
    own = decode_event({"tags": {"browser": "mine"}, "contexts": {
        "browser": {"name": "Firefox"}, "client_os": {"name": "iOS", "version": "17"}}},
        NOW_US)
    assert own.tags == {"browser": "mine", "os": "iOS 17"}


def test_tags_stay_within_the_limit() -> None:
    tags = {f"k{i}": "v" for i in range(MAX_TAGS + 5)}
    error = decode_event({"tags": tags, "server_name": "web"}, NOW_US)
    assert error.tags is not None and len(error.tags) == MAX_TAGS


SECRETS = ("Bearer s3cret-token", "session=s3cret-cookie", "s3cretsentrykey",
           "s3cret-proxy", "s3cret-pass")


def test_secrets_in_the_request_and_breadcrumbs_are_never_kept() -> None:
    event = {
        "request": {
            "url": "https://shop.example/pay?sentry_key=s3cretsentrykey&x=1",
            "query_string": [["sentry_key", "s3cretsentrykey"], ["page", "2"]],
            "headers": {"Authorization": "Bearer s3cret-token", "Cookie": "session=s3cret-cookie",
                        "X-Sentry-Auth": "Sentry sentry_key=s3cretsentrykey, sentry_version=7",
                        "Accept": "text/html"},
            "cookies": {"session": "s3cret-cookie"},
            "data": {"user": "ada", "password": "s3cret-pass"}},
        "breadcrumbs": {"values": [{"type": "http", "data": {
            "url": "http://sounding:3000/api/7/envelope/?sentry_key=s3cretsentrykey",
            "headers": [["proxy-authorization", "s3cret-proxy"]]}}]},
    }
    error = decode_event(event, NOW_US)
    stored = json.dumps([error.context, error.params, error.tags])
    assert not [s for s in SECRETS if s in stored]
    assert error.context is not None
    request = error.context["request"]
    assert request["headers"]["Authorization"] == FILTERED
    assert request["headers"]["Accept"] == "text/html"
    assert request["cookies"] == FILTERED
    assert request["url"] == f"https://shop.example/pay?sentry_key={FILTERED}&x=1"
    assert request["data"] == {"user": "ada", "password": FILTERED}


def test_breadcrumbs_keep_the_newest_hundred() -> None:
    crumbs = [{"message": str(i)} for i in range(150)]
    for form in (crumbs, {"values": crumbs}):
        context = decode_event({"breadcrumbs": form}, NOW_US).context
        assert context is not None
        assert [c["message"] for c in context["breadcrumbs"]] == [str(i) for i in range(50, 150)]


def test_chains_frames_and_text_are_bounded() -> None:
    frames = [{"function": f"f{i}", "filename": "a.py", "lineno": i + 1,
               "context_line": "x" * 5000, "pre_context": [str(n) for n in range(30)],
               "post_context": [str(n) for n in range(30)]} for i in range(300)]
    chain = [{"type": f"E{i}", "value": "v" * 10_000} for i in range(15)]
    chain[-1]["stacktrace"] = {"frames": frames}
    error = decode_event({"exception": {"values": chain}}, NOW_US)
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


def test_a_context_past_its_budget_loses_its_biggest_parts_first() -> None:
    big = {f"k{i}": "x" * 8000 for i in range(20)}  # about 160 KB
    error = decode_event({"contexts": big, "user": {"id": "u"}, "platform": "python"}, NOW_US)
    assert error.context == {"user": {"id": "u"}, "platform": "python",
                             "_trimmed": ["contexts"]}


def test_extra_too_deep_or_not_an_object_is_dropped() -> None:
    deep: Any = 1
    for _ in range(20):
        deep = {"a": deep}
    assert decode_event({"extra": deep}, NOW_US).params is None
    assert decode_event({"extra": ["a"]}, NOW_US).params is None
    assert decode_event({"extra": {"a": 1}}, NOW_US).params == {"a": 1}


def test_a_message_with_a_thread_stack_trace_gets_a_backtrace() -> None:
    event = {"platform": "python", "message": {"formatted": "slow"}, "threads": {"values": [
        {"id": 1, "stacktrace": {"frames": [{"filename": "other.py", "function": "idle"}]}},
        {"id": 2, "current": True, "stacktrace": {"frames": [
            {"abs_path": "/srv/app.py", "function": "tick", "lineno": 3, "in_app": True,
             "context_line": "warn()"}]}}]}}
    error = decode_event(event, NOW_US)
    assert (error.exception_class, error.message) == ("Message", "slow")
    assert error.backtrace == ['File "/srv/app.py", line 3, in tick']
    assert error.source_context is not None and error.source_context.context_line == "warn()"


def test_fields_of_the_wrong_type_are_dropped_not_refused() -> None:
    event = {"exception": "boom", "message": 5, "logentry": [], "level": {}, "tags": 3,
             "user": "ada", "request": "GET /", "contexts": [], "breadcrumbs": "x",
             "fingerprint": {}, "extra": "e", "timestamp": [], "environment": {},
             "release": [1], "event_id": 7, "platform": None, "sdk": 1, "threads": 2,
             "stacktrace": {"frames": [1, "x", {"lineno": "9", "in_app": "yes"}]}}
    error = decode_event(event, NOW_US)
    assert (error.exception_class, error.message, error.level) == ("Message", "5", "info")
    assert error.environment is None and error.release is None and error.tags is None
    assert error.ts_us == NOW_US and error.context == {"message": "5"}


# --- any object, within the store's limits ------------------------------------------

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
    wire, dropped = encode_checked(Batch(project_id=1, errors=[error], unchecked=True))
    assert dropped == {} and len(wire.errors) == 1


def test_numbers_json_cannot_carry_in_the_context_become_none() -> None:
    """1e400 is JSON the body's parser reads as infinity; kept, it made the store
    refuse the whole error after the door had answered 200 (found by
    tests/fuzz/test_fuzz_sentry.py)."""
    event = parse_json(b'{"message": "m", "sdk": {"name": "x", "v": 1e400}, '
                       b'"user": {"id": "u", "n": -1e400}, "contexts": {"os": {"v": 1e400}}}')
    error = decode_event(event, NOW_US)
    assert error.context is not None
    assert error.context["sdk"] == {"name": "x", "v": None}
    assert error.context["user"] == {"id": "u", "n": None}
    assert error.context["contexts"] == {"os": {"v": None}}
    assert_storable(error)


@pytest.fixture(scope="module")
def sdk_events(sdk: dict[str, Any]) -> list[dict[str, Any]]:
    return [*sdk["events"], node_event()]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=mutations(node_event(), max_changes=4))
def test_any_changed_event_decodes_within_the_stores_limits(data: Mutated) -> None:
    try:
        event = parse_json(dumps(data.body))  # as the door reads it
    except InvalidInput:
        return  # refused before any decoder sees it
    assert_storable(decode_event(event, NOW_US))


def test_every_real_event_decodes_within_the_stores_limits(
        sdk_events: list[dict[str, Any]]) -> None:
    for event in sdk_events:
        assert_storable(decode_event(event, NOW_US))


def test_a_blank_tag_key_and_a_pathless_frames_source_context_are_left_out() -> None:
    """As the custom door would refuse them, so that a forwarded error never is."""
    error = decode_event({"tags": {" ": "x", "k": " "}, "exception": {"values": [
        {"type": "E", "stacktrace": {"frames": [
            {"filename": "a.py", "lineno": 1, "context_line": "outer()", "in_app": True},
            {"function": "inner", "context_line": "raise E", "in_app": True}]}}]}}, NOW_US)
    assert error.tags == {"k": " "}
    assert error.source_context is not None and error.source_context.file == "a.py"
    assert error.exceptions is not None
    assert error.exceptions[0]["frames"][1]["context_line"] == "raise E"


def test_a_blank_exception_type_is_the_default_class() -> None:
    # The custom door refuses a blank class: a sidecar forwarding this event must
    # not have it refused at the gateway (tests/receiver/test_error_details.py).
    event = {"exception": {"values": [{"type": "  ", "value": "payment declined"}]}}
    error = decode_event(event, 1_790_000_000_000_000)
    assert error.exception_class == "Error"
    assert error.exceptions is not None and error.exceptions[-1]["type"] == "  "
