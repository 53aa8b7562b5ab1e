"""receiver/sentry/event.py and values.py: Sentry events, as real SDKs send them, become
ErrorEvents with their fields read leniently, and always within the store's limits.
The chain, frames and grouping are test_event_chain.py's; context and tags
test_event_context.py's.

The Python payloads are the real sentry-sdk's (sentry_sdk_client.py runs it with a
transport that records what it would send); the @sentry/node payload has the shape
Sentry's SDK documentation gives, with the frames the Node SDK sends (events.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from model.errors import InvalidInput
from model.fingerprint import frame_fingerprint
from receiver.jsonbody import parse_json
from tests.fuzz.strategies import Mutated, dumps, mutations
from tests.receiver.sentry.events import NOW_US, assert_storable, chained, decoded, node_event
from tests.support import clients

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)


def test_sdk_event_fields_become_the_record_fields(sdk: dict[str, Any]) -> None:
    event = chained(sdk)
    error = decoded(event, NOW_US)
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
    error = decoded(sdk["events"][1], NOW_US)
    assert (error.exception_class, error.message, error.level) == ("Message", "cache warmed",
                                                                   "info")
    assert error.exceptions is None and error.backtrace == []
    assert error.fingerprint == frame_fingerprint("Message", "", "cache warmed")


def test_node_event_fields() -> None:
    error = decoded(node_event(), NOW_US)
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
    error = decoded({"exception": [{"value": "boom"}]}, NOW_US)
    assert (error.exception_class, error.message, error.level) == ("Error", "boom", "error")
    assert error.fingerprint == frame_fingerprint("", "", "boom")


@pytest.mark.parametrize(("level", "expected"), [
    ("warn", "warning"), ("WARNING", "warning"), ("critical", "fatal"), ("log", "info"),
    ("debug", "debug"), (30, "warning"), (50, "fatal"), ("loud", "error"), (True, "error"),
    (None, "error")])
def test_level_reads_as_sentry_reads_it(level: Any, expected: str) -> None:
    assert decoded({"level": level, "exception": {"values": [{"type": "E"}]}},
                        NOW_US).level == expected


@pytest.mark.parametrize("user", [{"email": "a@b.c"}, {"username": "ada", "id": ""},
                                  {"ip_address": "::1"}])
def test_user_id_falls_back_to_email_username_and_address(user: dict[str, Any]) -> None:
    assert decoded({"user": user}, NOW_US).user_id == next(v for v in user.values() if v)


@pytest.mark.parametrize("bad", ["zz" * 16, "ab" * 15, "0" * 32, 42, None, "a" * 40])
def test_ids_that_are_not_ids_are_dropped(bad: Any) -> None:
    error = decoded({"event_id": bad, "contexts": {"trace": {"trace_id": bad,
                                                                  "span_id": bad}}}, NOW_US)
    assert (error.occurrence_key, error.trace_id, error.span_id) == (None, None, None)


@pytest.mark.parametrize(("timestamp", "expected"), [
    ("2026-11-21T10:00:00Z", 1_795_255_200_000_000), (1_795_255_200, 1_795_255_200_000_000),
    ("yesterday", NOW_US), (-5, NOW_US), (1e300, NOW_US), (10**400, NOW_US), (None, NOW_US)])
def test_timestamp_or_arrival_time(timestamp: Any, expected: int) -> None:
    assert decoded({"timestamp": timestamp}, NOW_US).ts_us == expected


def test_extra_too_deep_or_not_an_object_is_dropped() -> None:
    deep: Any = 1
    for _ in range(20):
        deep = {"a": deep}
    assert decoded({"extra": deep}, NOW_US).params is None
    assert decoded({"extra": ["a"]}, NOW_US).params is None
    assert decoded({"extra": {"a": 1}}, NOW_US).params == {"a": 1}


def test_a_message_with_a_thread_stack_trace_gets_a_backtrace() -> None:
    event = {"platform": "python", "message": {"formatted": "slow"}, "threads": {"values": [
        {"id": 1, "stacktrace": {"frames": [{"filename": "other.py", "function": "idle"}]}},
        {"id": 2, "current": True, "stacktrace": {"frames": [
            {"abs_path": "/srv/app.py", "function": "tick", "lineno": 3, "in_app": True,
             "context_line": "warn()"}]}}]}}
    error = decoded(event, NOW_US)
    assert (error.exception_class, error.message) == ("Message", "slow")
    assert error.backtrace == ['File "/srv/app.py", line 3, in tick']
    assert error.source_context is not None and error.source_context.context_line == "warn()"


def test_fields_of_the_wrong_type_are_dropped_not_refused() -> None:
    event = {"exception": "boom", "message": 5, "logentry": [], "level": {}, "tags": 3,
             "user": "ada", "request": "GET /", "contexts": [], "breadcrumbs": "x",
             "fingerprint": {}, "extra": "e", "timestamp": [], "environment": {},
             "release": [1], "event_id": 7, "platform": None, "sdk": 1, "threads": 2,
             "stacktrace": {"frames": [1, "x", {"lineno": "9", "in_app": "yes"}]}}
    error = decoded(event, NOW_US)
    assert (error.exception_class, error.message, error.level) == ("Message", "5", "info")
    assert error.environment is None and error.release is None and error.tags is None
    assert error.ts_us == NOW_US and error.context == {"message": "5"}


def test_a_blank_exception_type_is_the_default_class() -> None:
    # The custom door refuses a blank class: a sidecar forwarding this event must
    # not have it refused at the gateway (tests/receiver/custom/test_error_details.py).
    event = {"exception": {"values": [{"type": "  ", "value": "payment declined"}]}}
    error = decoded(event, 1_790_000_000_000_000)
    assert error.exception_class == "Error"
    assert error.exceptions is not None and error.exceptions[-1]["type"] == "  "


# --- any object, within the store's limits ------------------------------------------

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
    assert_storable(decoded(event, NOW_US))


def test_every_real_event_decodes_within_the_stores_limits(
        sdk_events: list[dict[str, Any]]) -> None:
    for event in sdk_events:
        assert_storable(decoded(event, NOW_US))
