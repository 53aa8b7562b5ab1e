"""receiver/sentry/span_stream.py: Sentry's streamed spans (span v2 `span` items) become
spans. The payload is what the real @sentry/node 11 streams (tests/js/send_sentry.js
--stream, recorded on a real socket): a server segment and a database child span."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporters.forward.encode import encode_spans
from model.records import Batch, Span
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.sentry.span_attributes import (
    CLIENT,
    CONSUMER,
    INTERNAL,
    MAX_SPANS,
    PRODUCER,
    SERVER,
    STATUS_ERROR,
    STATUS_UNSET,
)
from receiver.sentry.span_stream import decode_span_items
from storage import spanbody
from storage.wire import batch as wire
from tests.receiver.sentry.test_sentry_node import PUBLIC_KEY, run_node, sent_items
from tests.receiver.sentry.test_transaction import JSON, _paths
from tests.support.recorder import recording

NOW_US = 1_795_168_800_000_000


@pytest.fixture(scope="module")
def streamed() -> dict[str, Any]:
    """The trace id the SDK reported and the span items it streamed, in one payload
    (it sends them in one item here; merged so that a flush split in two is the same)."""
    with recording() as recorder:
        ids = run_node(recorder.url.replace("http://", f"http://{PUBLIC_KEY}@") + "/7",
                       "--stream")
    payloads = sent_items(recorder.requests)["span"]
    assert all(p["version"] == 2 for p in payloads)
    return {"trace_id": ids["trace_id"],
            "payload": {"version": 2, "items": [s for p in payloads for s in p["items"]]}}


@pytest.fixture
def payload(streamed: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(streamed["payload"])


def sent_span(payload: dict[str, Any], segment: bool) -> dict[str, Any]:
    [found] = [s for s in payload["items"] if s["is_segment"] is segment]
    return found


def spans_of(payload: dict[str, Any]) -> dict[str, Span]:
    """The decoded spans by their sentry.op; none dropped."""
    decoded = decode_span_items(payload, NOW_US)
    assert decoded.dropped == 0, decoded.reasons
    return {span.attributes["sentry.op"]: span for span in decoded.spans}


def processed(spans: list[Span]) -> Batch:
    batch = Batch(1, spans=spans)
    for processor in (ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics")):
        batch = processor.process(batch)
    return batch


def ns(seconds: float) -> int:
    return round(seconds * 1_000_000) * 1000


def typed(value: Any, kind: str) -> dict[str, Any]:
    return {"type": kind, "value": value}


def test_each_streamed_span_is_a_span_of_the_trace_under_its_parent(
        streamed: dict[str, Any], payload: dict[str, Any]) -> None:
    spans = spans_of(payload)
    assert set(spans) == {"http.server", "db.query"}
    root, child = spans["http.server"], spans["db.query"]
    assert {root.trace_id, child.trace_id} == {streamed["trace_id"]}
    sent_root, sent_child = sent_span(payload, True), sent_span(payload, False)
    assert (root.span_id, root.parent_span_id, root.name) == (
        sent_root["span_id"], "", "GET /orders/:id")
    assert (child.span_id, child.parent_span_id, child.name) == (
        sent_child["span_id"], root.span_id, "SELECT * FROM orders WHERE id = $1")
    for span, sent in ((root, sent_root), (child, sent_child)):
        assert (span.start_ns, span.end_ns) == (ns(sent["start_timestamp"]),
                                                ns(sent["end_timestamp"]))
        assert span.scope_name == "sentry"


def test_kinds_follow_sentry_kind_then_the_op(payload: dict[str, Any]) -> None:
    spans = spans_of(payload)
    assert (spans["http.server"].kind, spans["db.query"].kind) == (SERVER, CLIENT)
    child = sent_span(payload, False)
    for op, declared, kind in [("queue.publish", None, PRODUCER),
                               ("queue.process", None, CONSUMER),
                               ("function", None, INTERNAL),
                               ("function", "client", CLIENT),  # the SDK's OTel layer
                               ("db.query", "bogus", CLIENT)]:
        child["attributes"]["sentry.op"] = typed(op, "string")
        child["attributes"]["sentry.kind"] = typed(declared, "string")
        assert spans_of(payload)[op].kind == kind, (op, declared)


def test_ok_is_unset_and_error_an_error_named_by_its_status_message(
        payload: dict[str, Any]) -> None:
    spans = spans_of(payload)
    assert {(s.status_code, s.status_message) for s in spans.values()} == {
        (STATUS_UNSET, "")}
    child, root = sent_span(payload, False), sent_span(payload, True)
    child["status"] = "error"
    child["attributes"]["sentry.status.message"] = typed("deadline_exceeded", "string")
    root["status"] = "error"
    db, server = spans_of(payload)["db.query"], spans_of(payload)["http.server"]
    assert (db.status_code, db.status_message) == (STATUS_ERROR, "deadline_exceeded")
    assert (server.status_code, server.status_message) == (STATUS_ERROR, "error")


def test_an_http_status_of_500_or_more_is_an_error_though_ok(payload: dict[str, Any]) -> None:
    sent_span(payload, True)["attributes"]["http.response.status_code"] = typed(503,
                                                                                "integer")
    root = spans_of(payload)["http.server"]
    assert (root.status_code, root.status_message) == (STATUS_ERROR, "")


def test_the_query_is_a_database_call_and_a_routed_segment_a_request(
        payload: dict[str, Any]) -> None:
    batch = processed(list(spans_of(payload).values()))
    spans = {span.attributes["sentry.op"]: span for span in batch.spans}
    db = spans["db.query"]
    assert db.category == "database"
    assert db.semantic == {"db.system.name": "postgresql",
                           "db.query.text": "SELECT * FROM orders WHERE id = $1",
                           "db.operation.name": "SELECT"}
    assert batch.requests == []  # the segment says no method: not a request

    root = sent_span(payload, True)
    root["name"] = "/orders/:id"
    root["attributes"].update({
        "sentry.segment.name.source": typed("route", "string"),
        "http.request.method": typed("GET", "string"),
        "http.response.status_code": typed(200, "integer")})
    batch = processed(list(spans_of(payload).values()))
    [request] = batch.requests
    assert (request.method, request.route, request.status, request.service, request.env) \
        == ("GET", "/orders/:id", 200, "checkout-node", "staging")


def test_only_a_segment_s_name_source_names_its_route(payload: dict[str, Any]) -> None:
    child = sent_span(payload, False)
    child["attributes"].update({"sentry.kind": typed("server", "string"),
                                "sentry.segment.name.source": typed("route", "string")})
    assert "http.route" not in spans_of(payload)["db.query"].attributes
    child["attributes"]["sentry.span.source"] = typed("url", "string")
    assert spans_of(payload)["db.query"].attributes["http.route"] == child["name"]


def test_typed_attributes_become_their_values(payload: dict[str, Any]) -> None:
    sent_span(payload, False)["attributes"].update({
        "s": typed("x", "string"), "i": typed(7, "integer"), "f": typed(0.5, "double"),
        "b": typed(False, "boolean"), "list": typed(["a", "b"], "array"),
        "nested": typed([{"a": 1}], "array"), "bare": 3, "none": typed(None, "string"),
        "untyped": {"type": "string"},
        "duration": {"type": "integer", "value": 164, "unit": "second"},
        **{f"k{i}": typed(i, "integer") for i in range(300)}})
    attributes = spans_of(payload)["db.query"].attributes
    assert {k: attributes[k] for k in ("s", "i", "f", "b", "list", "nested", "bare",
                                       "duration")} == {
        "s": "x", "i": 7, "f": 0.5, "b": False, "list": ["a", "b"], "nested": '[{"a":1}]',
        "bare": 3, "duration": 164}
    assert not {"none", "untyped"} & attributes.keys()
    assert len(attributes) == 128


def test_the_resource_is_each_span_s_release_environment_sdk_and_service(
        payload: dict[str, Any]) -> None:
    spans = list(spans_of(payload).values())
    assert spans[0].resource_attributes == {
        "service.name": "checkout-node", "deployment.environment.name": "staging",
        "service.version": "shop-node@4.5.6", "telemetry.sdk.name": "sentry.javascript.node",
        "telemetry.sdk.version": "11.12.0"}
    assert all(span.service_name == "checkout-node" for span in spans)
    # Spans alike share one resource dict (the store hashes it once).
    assert spans[0].resource_attributes is spans[1].resource_attributes
    # What went into the resource is not kept on the span again; the service
    # attribute is, as a transaction keeps its service tag.
    assert not {"sentry.release", "sentry.environment", "sentry.sdk.name",
                "sentry.sdk.version"} & spans[0].attributes.keys()
    assert spans[0].attributes["service"] == "checkout-node"


def test_a_service_name_attribute_or_else_the_platform_names_the_service(
        payload: dict[str, Any]) -> None:
    child, root = sent_span(payload, False), sent_span(payload, True)
    del child["attributes"]["service"]
    child["attributes"]["service.name"] = typed("billing", "string")
    del root["attributes"]["service"]
    spans = spans_of(payload)
    assert spans["db.query"].service_name == "billing"
    assert "service.name" not in spans["db.query"].attributes
    assert spans["http.server"].service_name == "unknown_service:node"  # the SDK's name
    root["attributes"]["sentry.platform"] = typed("javascript", "string")
    assert spans_of(payload)["http.server"].service_name == "unknown_service:javascript"
    assert spans_of(payload)["db.query"].resource_attributes["service.name"] == "billing"


def test_a_span_without_a_readable_parent_hangs_under_its_segment(
        payload: dict[str, Any]) -> None:
    child, root = sent_span(payload, False), sent_span(payload, True)
    child["parent_span_id"] = 12
    assert spans_of(payload)["db.query"].parent_span_id == root["span_id"]
    # A segment keeps the remote parent it continues, and never hangs under itself.
    root["parent_span_id"] = "00f067aa0ba902b7"
    assert spans_of(payload)["http.server"].parent_span_id == "00f067aa0ba902b7"
    del child["parent_span_id"]
    child["is_segment"] = True
    child["attributes"]["sentry.segment.id"] = typed(child["span_id"], "string")
    assert spans_of(payload)["db.query"].parent_span_id == ""


def test_a_span_without_valid_ids_or_times_is_dropped_alone(payload: dict[str, Any]) -> None:
    good = sent_span(payload, True)
    bad = [{**good, "span_id": "not-hex-at-all!!"}, {**good, "trace_id": "0" * 32},
           {k: v for k, v in good.items() if k != "end_timestamp"},
           {**good, "start_timestamp": good["end_timestamp"] + 1}, "not a span"]
    payload["items"] = [*bad, good]
    decoded = decode_span_items(payload, NOW_US)
    assert decoded.dropped == 5
    assert [reason.split(":")[0] for reason in decoded.reasons] == [
        f"items[{i}]" for i in range(5)]
    [kept] = decoded.spans
    assert kept.span_id == good["span_id"]


@pytest.mark.parametrize("sent", [None, [], "spans", {"version": 2}, {"items": {}}])
def test_a_payload_without_an_items_list_is_one_dropped(sent: Any) -> None:
    decoded = decode_span_items(sent, NOW_US)
    assert (decoded.spans, decoded.dropped) == ([], 1)
    assert decoded.reasons[0].startswith("span:")


def test_at_most_1000_spans_per_item(payload: dict[str, Any]) -> None:
    template = sent_span(payload, False)
    payload["items"] = [{**template, "span_id": f"{i + 1:016x}"}
                        for i in range(MAX_SPANS + 5)]
    decoded = decode_span_items(payload, NOW_US)
    assert (len(decoded.spans), decoded.dropped) == (MAX_SPANS, 5)


def test_streamed_spans_store_and_forward_with_their_values(payload: dict[str, Any]) -> None:
    batch = processed(list(spans_of(payload).values()))
    for span in batch.spans:
        assert spanbody.decode(spanbody.encode(span)) == (span.attributes, [])
    assert len(wire.encode_batch(batch).spans) == len(batch.spans)
    request, failed = encode_spans(batch.spans)
    assert failed == 0
    [resource_spans] = request.resource_spans
    sent = resource_spans.scope_spans[0].spans
    assert [(s.span_id.hex(), s.parent_span_id.hex(), s.kind) for s in sent] == [
        (s.span_id, s.parent_span_id, s.kind) for s in batch.spans]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_never_raises_whatever_any_field_holds(streamed: dict[str, Any],
                                               data: st.DataObject) -> None:
    payload: Any = copy.deepcopy(streamed["payload"])
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(_paths(payload)))
        value = data.draw(JSON)
        if not path:
            payload = value
            break
        holder = payload
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = value
    decoded = decode_span_items(payload, NOW_US)
    for span in decoded.spans:
        assert len(span.trace_id) == 32 and len(span.span_id) == 16
        assert len(span.parent_span_id) in (0, 16)
        assert 0 <= span.start_ns <= span.end_ns
        assert span.service_name == span.resource_attributes["service.name"]
        spanbody.encode(span)
