"""receiver/sentry/span_stream.py: Sentry's streamed spans (span v2 `span` items) become
spans. The payloads are what the real SDKs stream, recorded on a real socket:
@sentry/node 11 (tests/js/send_sentry.js --stream: a server segment with attributes of
every type and a link, and a database child span) and sentry-sdk 3 (sdk3_app.py: a
routed server segment with a link, a query and a call that failed). Last, sentry-sdk
3's trace end to end, through the read API, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import requests
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
from receiver.sentry.span_stream import MAX_LINKS, decode_span_items, links_of
from receiver.sentry.typed_attributes import typed_value
from storage import spanbody
from storage.wire import batch as wire
from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.e2e import api, start_with_api
from tests.receiver.sentry.helpers import dsn
from tests.receiver.sentry.sdk_apps import run_sdk3_app
from tests.receiver.sentry.test_sentry_node import PUBLIC_KEY, run_node, sent_items
from tests.receiver.sentry.test_transaction import JSON, _paths
from tests.support import clients
from tests.support.recorder import recording
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_3)

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


@pytest.fixture(scope="module")
def streamed_py() -> dict[str, Any]:
    """What sdk3_app.py reported (its ids, the link it sent) and the span items its
    sentry-sdk 3 streamed, in one payload."""
    with recording() as recorder:
        sent = run_sdk3_app(recorder.url.replace("http://", f"http://{PUBLIC_KEY}@") + "/7")
    payloads = sent_items(recorder.requests)["span"]
    assert all(p["version"] == 2 for p in payloads)
    return {**sent, "payload": {"version": 2,
                                "items": [s for p in payloads for s in p["items"]]}}


@pytest.fixture
def payload_py(streamed_py: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(streamed_py["payload"])


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


@pytest.mark.parametrize(("name", "route"), [
    ("GET /orders/:id", "/orders/:id"), ("/orders/:id", "/orders/:id"),
    ("get /orders", "get /orders"), ("GET orders", "GET orders")])
def test_a_routed_segment_s_route_is_its_name_without_its_method(
        payload: dict[str, Any], name: str, route: str) -> None:
    root = sent_span(payload, True)
    root["name"] = name  # @sentry/node names it "GET /orders/:id", as OpenTelemetry does
    root["attributes"]["sentry.segment.name.source"] = typed("route", "string")
    assert spans_of(payload)["http.server"].attributes["http.route"] == route


def test_only_a_segment_s_name_source_names_its_route(payload: dict[str, Any]) -> None:
    child = sent_span(payload, False)
    child["attributes"].update({"sentry.kind": typed("server", "string"),
                                "sentry.segment.name.source": typed("route", "string")})
    assert "http.route" not in spans_of(payload)["db.query"].attributes
    child["attributes"]["sentry.span.source"] = typed("url", "string")
    assert spans_of(payload)["db.query"].attributes["http.route"] == child["name"]


PREVIOUS = {"trace_id": "627a2885119dcc8184fae7eef09438cb", "span_id": "6c71fc6b09b8b716",
            "trace_state": "", "flags": 1, "attributes": {"sentry.link.type": "previous_trace"}}


def test_sentry_sdk_3_s_segment_names_the_transaction_its_children_ran_in(
        streamed_py: dict[str, Any], payload_py: dict[str, Any]) -> None:
    decoded = decode_span_items(payload_py, NOW_US)
    assert decoded.dropped == 0, decoded.reasons
    spans = {span.span_id: span for span in decoded.spans}
    segment = spans[streamed_py["segment"]]
    query, failed = spans[streamed_py["query"]], spans[streamed_py["failed"]]
    assert (segment.name, segment.kind, segment.parent_span_id) == (
        "GET /items/{id}", SERVER, "")
    assert segment.attributes["http.route"] == "/items/{id}"  # its name is its route
    assert {query.parent_span_id, failed.parent_span_id} == {segment.span_id}
    assert (query.name, query.kind) == ("SELECT * FROM items WHERE id = %s", CLIENT)
    # Each child says which transaction it ran in, as the SDK sent it.
    assert {s.attributes["sentry.segment.name"] for s in spans.values()} == {
        "GET /items/{id}"}
    assert {s.service_name for s in spans.values()} == {"shop-py"}
    assert segment.resource_attributes["telemetry.sdk.version"] == streamed_py["sdk"]

    batch = processed(decoded.spans)
    [request] = batch.requests
    assert (request.method, request.route, request.status) == ("GET", "/items/{id}", 200)


def test_sentry_sdk_3_s_attributes_keep_their_types(payload_py: dict[str, Any]) -> None:
    [segment] = [s for s in decode_span_items(payload_py, NOW_US).spans
                 if s.parent_span_id == ""]
    values = segment.attributes
    assert {k: values[k] for k in ("item.id", "item.price", "item.in_stock", "item.tags",
                                   "item.sizes", "item.weights", "item.flags")} == {
        "item.id": 42, "item.price": 9.5, "item.in_stock": True, "item.tags": ["new", "sale"],
        "item.sizes": [38, 40], "item.weights": [0.5, 1.25], "item.flags": [True, False]}
    assert type(values["item.price"]) is float and type(values["item.id"]) is int
    assert values["item.serial"] == str(2**70)  # an integer OTLP cannot hold: its text
    # Sent as a string, though digits: kept a string.
    assert isinstance(values["thread.id"], str) and values["thread.id"].isdigit()
    stored, _, _ = spanbody.decode_with_links(spanbody.encode(segment))
    assert stored == values


def test_sentry_sdk_3_s_failed_span_is_an_error_and_the_rest_unset(
        streamed_py: dict[str, Any], payload_py: dict[str, Any]) -> None:
    spans = {s.span_id: s for s in decode_span_items(payload_py, NOW_US).spans}
    failed = spans.pop(streamed_py["failed"])
    assert (failed.status_code, failed.status_message) == (STATUS_ERROR, "error")
    assert {(s.status_code, s.status_message) for s in spans.values()} == {
        (STATUS_UNSET, "")}


def test_links_are_kept_as_an_otlp_span_s(streamed_py: dict[str, Any],
                                          payload_py: dict[str, Any],
                                          payload: dict[str, Any]) -> None:
    spans = {s.span_id: s for s in decode_span_items(payload_py, NOW_US).spans}
    assert spans.pop(streamed_py["segment"]).links == [PREVIOUS]
    assert all(s.links == [] for s in spans.values())
    # @sentry/node: the same link, from its span context (traceFlags 1: sampled).
    assert spans_of(payload)["http.server"].links == [PREVIOUS]
    assert spans_of(payload)["db.query"].links == []


def test_a_link_without_readable_ids_is_left_out_and_sampled_is_the_flag() -> None:
    other = {"trace_id": "ab" * 16, "span_id": "cd" * 8}
    assert links_of([{**other, "span_id": "xyz"}, {"span_id": "cd" * 8}, "link", None,
                     {**other, "sampled": False, "attributes": {"n": typed("3", "integer")}},
                     {**other, "sampled": "yes"}]) == [
        {**other, "trace_state": "", "flags": 0, "attributes": {"n": 3}},
        {**other, "trace_state": "", "flags": 0, "attributes": {}}]
    assert links_of({"trace_id": "ab" * 16}) == [] and links_of(None) == []
    assert len(links_of([other] * (MAX_LINKS + 3))) == MAX_LINKS


@pytest.mark.parametrize(("sent", "kept"), [
    (typed("x", "string"), "x"),
    (typed(7, "integer"), 7),
    (typed("42", "integer"), 42),  # quoted by the SDK: the integer it says it is
    (typed(" -9 ", "integer"), -9),
    (typed(5.0, "integer"), 5),
    (typed(str(2**63), "integer"), str(2**63)),  # beyond int64: kept as sent
    (typed(5.5, "integer"), 5.5),  # not its type and not readable as it: kept
    (typed("many", "integer"), "many"),
    (typed(True, "integer"), True),
    (typed(1, "double"), 1.0),
    (typed("0.25", "double"), 0.25),
    (typed("NaN", "double"), "NaN"),
    (typed("true", "boolean"), True),
    (typed("no", "boolean"), "no"),
    (typed([1, "a"], "array"), [1, "a"]),
    (typed("a,b", "array"), "a,b"),
    (typed({"a": 1}, "object"), {"a": 1}),  # a type to come: its value as it is
    ({"type": "integer", "value": 164, "unit": "second"}, 164),
    (typed(None, "string"), None),
])
def test_a_typed_value_is_read_as_its_type_where_that_loses_nothing(sent: dict[str, Any],
                                                                    kept: Any) -> None:
    read = typed_value(sent)
    assert read == kept and type(read) is type(kept)


def test_ok_and_unset_are_unset_and_any_other_status_an_error_named_by_it(
        payload: dict[str, Any]) -> None:
    child = sent_span(payload, False)
    for status, expected in [("ok", (STATUS_UNSET, "")), ("unset", (STATUS_UNSET, "")),
                             ("cancelled", (STATUS_ERROR, "cancelled")),
                             (None, (STATUS_UNSET, ""))]:
        child["status"] = status
        db = spans_of(payload)["db.query"]
        assert (db.status_code, db.status_message) == expected, status


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
        assert spanbody.decode_with_links(spanbody.encode(span)) == (
            span.attributes, [], span.links)
    assert len(wire.encode_batch(batch).spans) == len(batch.spans)
    request, failed = encode_spans(batch.spans)
    assert failed == 0
    [resource_spans] = request.resource_spans
    sent = resource_spans.scope_spans[0].spans
    assert [(s.span_id.hex(), s.parent_span_id.hex(), s.kind) for s in sent] == [
        (s.span_id, s.parent_span_id, s.kind) for s in batch.spans]
    assert [[(link.trace_id.hex(), link.span_id.hex(), link.flags) for link in s.links]
            for s in sent] == [[(link["trace_id"], link["span_id"], link["flags"])
                                for link in s.links] for s in batch.spans]


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
        assert all(len(link["trace_id"]) == 32 and len(link["span_id"]) == 16
                   for link in span.links)
        spanbody.encode(span)


# --- sentry-sdk 3 end to end: stored, and read through the API -------------------------

def test_sentry_sdk_3_s_streamed_trace_is_read_through_the_api(
        start: Callable[..., Server], db_url: str) -> None:
    server = start_with_api(start, db_url)
    sent = run_sdk3_app(dsn(server))
    assert sent["log"] == []
    trace_id = sent["trace_id"]

    listed = api(server, "/traces")["page"]["items"]
    [summary] = [t for t in listed if t["trace_id"] == trace_id]
    assert (summary["root_name"], summary["span_count"], summary["error_count"]) == (
        "GET /items/{id}", 3, 1)
    rows = api(server, f"/traces/{trace_id}")["rows"]
    spans = {row["span"]["span_id"]: row["span"] for row in rows}
    assert [(r["span"]["span_id"], r["depth"]) for r in rows][0] == (sent["segment"], 0)
    segment = spans[sent["segment"]]
    assert (segment["name"], segment["kind"], segment["service_name"]) == (
        "GET /items/{id}", SERVER, "shop-py")
    assert {k: segment["attributes"][k] for k in (
        "item.id", "item.price", "item.in_stock", "item.tags", "item.sizes", "http.route",
        "sentry.segment.name")} == {
        "item.id": 42, "item.price": 9.5, "item.in_stock": True, "item.tags": ["new", "sale"],
        "item.sizes": [38, 40], "http.route": "/items/{id}",
        "sentry.segment.name": "GET /items/{id}"}
    assert segment["links"] == [PREVIOUS]
    assert segment["resource_attributes"]["service.version"] == "shop@3.0"
    failed, query = spans[sent["failed"]], spans[sent["query"]]
    assert (failed["status_code"], failed["status_message"]) == (STATUS_ERROR, "error")
    assert (query["status_code"], query["kind"], query["category"]) == (
        STATUS_UNSET, CLIENT, "database")
    assert {failed["parent_span_id"], query["parent_span_id"]} == {sent["segment"]}
    assert query["attributes"]["sentry.segment.name"] == "GET /items/{id}"

    # The trace page lists the link, pointing at the linked span in its own trace.
    page = requests.get(f"{server.base}/projects/acme/traces/{trace_id}", timeout=10,
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert page.status_code == 200, page.text
    target = (f'/projects/acme/traces/{PREVIOUS["trace_id"]}?'
              f'span={PREVIOUS["span_id"]}')
    assert f'href="{target}"' in page.text and "previous_trace" in page.text
