"""storage/spanbody: how a span's attributes, events and links are stored."""

from __future__ import annotations

import json
from typing import Any

import requests
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from model.records import Span
from receiver.otlp.decode_traces import MAX_VALUE_DEPTH
from storage import spanbody
from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.otlp_helpers import random_trace_id, request_of, span_pb


def _message() -> trace_pb2.Span:
    message = trace_pb2.Span(
        trace_id=bytes.fromhex("ab" * 16), span_id=bytes.fromhex("cd" * 8), name="GET /x",
        kind=2, start_time_unix_nano=10, end_time_unix_nano=20, trace_state="k=v",
        dropped_attributes_count=3)
    message.attributes.extend([
        KeyValue(key="http.request.method", value=AnyValue(string_value="GET")),
        KeyValue(key="password", value=AnyValue(string_value="hunter2")),
        KeyValue(key="n", value=AnyValue(int_value=7))])
    event = message.events.add(name="exception", time_unix_nano=15)
    event.attributes.add(key="exception.type", value=AnyValue(string_value="KeyError"))
    message.links.add(trace_id=bytes.fromhex("ef" * 16), span_id=bytes.fromhex("01" * 8))
    return message


def _span(message: trace_pb2.Span | None = None, **kw: Any) -> Span:
    return Span("ab" * 16, "cd" * 8, "", "GET /x", 2, 10, 20, 0, "", "svc", "scope", {},
                otlp=message, **kw)


def test_a_span_no_stage_looked_into_is_stored_in_the_bytes_it_came_in() -> None:
    message = _message()
    span = _span(message)
    assert span.find_attributes(frozenset({"n", "absent"})) == {"n": 7}
    assert span.has_events()
    assert span.untouched  # neither call decoded the attributes or events
    assert spanbody.encode(span) == message.SerializeToString()


def test_a_changed_attribute_is_stored_changed_and_the_rest_kept() -> None:
    span = _span(_message())
    span.attributes["password"] = "[redacted]"
    attributes, events = spanbody.decode(spanbody.encode(span))
    assert attributes == {"http.request.method": "GET", "password": "[redacted]", "n": 7}
    assert events == [{"name": "exception", "time_unix_nano": 15,
                       "attributes": {"exception.type": "KeyError"}}]
    stored = trace_pb2.Span.FromString(spanbody.encode(span))
    assert stored.trace_state == "k=v" and len(stored.links) == 1  # not in the record


def test_every_value_kind_survives_a_span_built_from_python_values() -> None:
    """Spans decoded from OTLP/JSON carry Python values; they go back to AnyValues."""
    attributes = {"s": "naïve ✓", "b": False, "i": -(2**63), "big": 2**64, "f": 0.25,
                  "nan": "NaN", "list": [1, "two", [3.5]], "empty.list": [],
                  "map": {"inner": {"deep": True}}, "empty.map": {}, "none": None}
    events = [{"name": "e", "time_unix_nano": 5, "attributes": {"k": [1, "two"]}}]
    span = _span(None, attributes=attributes, events=events)
    assert not span.untouched
    stored_attributes, stored_events = spanbody.decode(spanbody.encode(span))
    # An integer beyond int64 cannot be an int_value: it is kept as its decimal text.
    assert stored_attributes == {**attributes, "big": str(2**64)}
    assert stored_events == events


LINK = {"trace_id": "ef" * 16, "span_id": "01" * 8, "trace_state": "", "flags": 1,
        "attributes": {"sentry.link.type": "previous_trace"}}


def test_a_span_without_a_message_stores_its_links_as_an_otlp_span_s() -> None:
    span = _span(None, attributes={}, links=[LINK])
    body = spanbody.encode(span)
    [stored] = trace_pb2.Span.FromString(body).links
    assert (stored.trace_id.hex(), stored.span_id.hex(), stored.flags) == (
        "ef" * 16, "01" * 8, 1)
    assert spanbody.decode_with_links(body) == ({}, [], [LINK])


def test_a_message_s_links_are_read_only_when_asked_and_kept_when_unread() -> None:
    message = _message()
    span = _span(message)
    span.attributes["n"] = 8  # touched: written again, but its links are not read
    assert span.links_unread
    _, _, links = spanbody.decode_with_links(spanbody.encode(span))
    assert links == [{"trace_id": "ef" * 16, "span_id": "01" * 8, "trace_state": "",
                      "flags": 0, "attributes": {}}]
    span.links = [LINK]  # a stage's links replace the message's
    assert spanbody.decode_with_links(spanbody.encode(span))[2] == [LINK]
    read = _span(_message())
    assert read.links == links and not read.untouched


def test_resource_ids_are_stable_and_belong_to_one_project() -> None:
    first = spanbody.resource_id(1, '{"service.name":"web"}')
    assert first == spanbody.resource_id(1, '{"service.name":"web"}')
    assert 0 < first < 2**63
    assert first != spanbody.resource_id(2, '{"service.name":"web"}')
    assert first != spanbody.resource_id(1, '{"service.name":"api"}')


# --- whatever a door accepts reads back: the deepest values, through the read API ------

def _nested_json(levels: int) -> dict[str, Any]:
    """An OTLP/JSON AnyValue holding `levels` key-value lists and arrays in turn."""
    value: dict[str, Any] = {"stringValue": "leaf"}
    for level in range(levels):
        value = ({"arrayValue": {"values": [value]}} if level % 2 else
                 {"kvlistValue": {"values": [{"key": "k", "value": value}]}})
    return value


def _nested_python(levels: int) -> Any:
    value: Any = "leaf"
    for level in range(levels):
        value = [value] if level % 2 else {"k": value}
    return value


def _nested_pb(levels: int) -> AnyValue:
    root = AnyValue()
    value = root
    for _ in range(levels):
        value = value.kvlist_value.values.add(key="k").value
    value.string_value = "leaf"
    return root


def test_the_deepest_values_each_door_accepts_are_readable_through_the_api(
        start: Any, sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    trace_id = random_trace_id()
    deepest = _nested_json(MAX_VALUE_DEPTH)
    body = json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "web"}},
                                    {"key": "deep", "value": deepest}]},
        "scopeSpans": [{"spans": [{
            "traceId": trace_id, "spanId": "00000000000000a1", "name": "json",
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000100000000",
            "attributes": [{"key": "deep", "value": deepest}],
            "events": [{"name": "exception", "timeUnixNano": "1700000000050000000",
                        "attributes": [{"key": "exception.type", "value": {"stringValue": "E"}},
                                       {"key": "deep", "value": deepest}]}]}]}]}]})
    response = requests.post(server.base + "/ingest/v1/traces", data=body.encode(),
                             headers=server.headers(), timeout=30)
    assert response.status_code == 202, response.text
    # Protobuf: as deep as a request parses at all (protobuf's 100 messages).
    message = span_pb(trace_id, "00000000000000a2", "protobuf")
    message.start_time_unix_nano, message.end_time_unix_nano = 1_700_000_000 * 10**9, \
        1_700_000_001 * 10**9
    message.attributes.add(key="deep", value=_nested_pb(31))
    response = requests.post(server.base + "/ingest/v1/traces",
                             data=request_of(message).SerializeToString(),
                             headers=server.headers(**{"Content-Type": "application/x-protobuf"}),
                             timeout=30)
    assert response.status_code == 202, response.text

    trace = requests.get(f"{server.base}/api/v1/projects/acme/traces/{trace_id}",
                         headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30)
    assert trace.status_code == 200, trace.text
    spans = {row["span"]["name"]: row["span"] for row in trace.json()["rows"]}
    assert spans["json"]["attributes"]["deep"] == _nested_python(MAX_VALUE_DEPTH)
    assert spans["json"]["events"][0]["attributes"]["deep"] == _nested_python(MAX_VALUE_DEPTH)
    pb_value: Any = spans["protobuf"]["attributes"]["deep"]
    for _ in range(31):
        pb_value = pb_value["k"]
    assert pb_value == "leaf"
