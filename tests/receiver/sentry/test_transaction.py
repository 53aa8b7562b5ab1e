"""receiver/sentry/transaction.py: a Sentry transaction becomes spans. The payloads are
what the real Python sentry-sdk sends (tests/receiver/sentry/sentry_sdk_txn_client.py:
Tornado, SQLAlchemy and http.client traced by the SDK's own integrations)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporters.forward.encode import encode_spans
from model.records import Batch, Span
from model.timeutil import parse_iso8601_us
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.sentry.span_attributes import (
    CLIENT,
    CONSUMER,
    INTERNAL,
    MAX_ATTRIBUTES,
    PRODUCER,
    SERVER,
    STATUS_ERROR,
    STATUS_UNSET,
    kind_of,
)
from receiver.sentry.transaction import MAX_SPANS, decode_transaction
from storage import spanbody
from storage.wire import batch as wire
from tests.support import clients

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

CLIENT_SCRIPT = Path(__file__).with_name("sentry_sdk_txn_client.py")
NOW_US = 1_795_168_800_000_000


@pytest.fixture(scope="module")
def sent() -> list[dict[str, Any]]:
    """The two transactions the SDK sent: the request answered 200, then the 503 one."""
    python = clients.python(clients.SENTRY_SDK_2)
    done = subprocess.run([python, str(CLIENT_SCRIPT)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    items = json.loads(done.stdout)
    transactions = [payload for kind, payload in items if kind == "transaction"]
    assert len(transactions) == 2, items
    return sorted(transactions, key=lambda t: t["contexts"]["response"]["status_code"])


@pytest.fixture
def ok(sent: list[dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(sent[0])


@pytest.fixture
def failed(sent: list[dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(sent[1])


def spans_of(event: dict[str, Any]) -> list[Span]:
    decoded = decode_transaction(event, NOW_US)
    assert decoded.dropped == 0, decoded.reasons
    return decoded.spans


def by_op(spans: list[Span]) -> dict[str, Span]:
    return {span.attributes["sentry.op"]: span for span in spans}


def processed(spans: list[Span]) -> Batch:
    batch = Batch(1, spans=spans)
    for processor in (ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics")):
        batch = processor.process(batch)
    return batch


def ns(sentry_time: str) -> int:
    return parse_iso8601_us(sentry_time) * 1000


def test_the_transaction_is_the_root_span_and_its_spans_the_children(
        ok: dict[str, Any]) -> None:
    spans = spans_of(ok)
    trace = ok["contexts"]["trace"]
    root, children = spans[0], spans[1:]
    assert (root.trace_id, root.span_id, root.parent_span_id) == (
        trace["trace_id"], trace["span_id"], "")
    assert root.name == ok["transaction"]
    assert (root.start_ns, root.end_ns) == (ns(ok["start_timestamp"]), ns(ok["timestamp"]))
    assert len(children) == len(ok["spans"]) == 4
    for child, sent_child in zip(children, ok["spans"], strict=True):
        assert (child.trace_id, child.span_id, child.parent_span_id) == (
            trace["trace_id"], sent_child["span_id"], trace["span_id"])
        assert child.name == sent_child["description"]
        assert (child.start_ns, child.end_ns) == (ns(sent_child["start_timestamp"]),
                                                  ns(sent_child["timestamp"]))
        assert child.scope_name == "sentry" and child.service_name == "checkout"


def test_kinds_follow_the_op(ok: dict[str, Any]) -> None:
    kinds = {op: span.kind for op, span in by_op(spans_of(ok)).items()}
    assert kinds == {"http.server": SERVER, "db": CLIENT, "http.client": CLIENT,
                     "queue.publish": PRODUCER, "queue.process": CONSUMER}


@pytest.mark.parametrize(("op", "data", "kind"), [
    ("db.sql.query", {}, CLIENT), ("cache.get", {}, CLIENT), ("rpc", {}, CLIENT),
    ("grpc.client", {}, CLIENT), ("grpc.server", {}, SERVER),
    ("queue.submit.celery", {}, PRODUCER), ("queue.task.celery", {}, CONSUMER),
    ("function", {}, INTERNAL), ("ui.render", {}, INTERNAL), (None, {}, INTERNAL),
    # An OpenTelemetry-based SDK (@sentry/node) says the kind itself.
    ("function", {"otel.kind": "SERVER"}, SERVER), ("db", {"otel.kind": "bogus"}, CLIENT),
])
def test_kinds_of_other_ops(op: str | None, data: dict[str, Any], kind: int) -> None:
    assert kind_of(op, data) == kind


def test_sentry_ok_is_unset_and_any_other_status_an_error_named_by_it(
        ok: dict[str, Any], failed: dict[str, Any]) -> None:
    fine, broken = by_op(spans_of(ok)), by_op(spans_of(failed))
    assert ok["contexts"]["trace"]["status"] == "ok"
    assert (fine["http.server"].status_code, fine["http.server"].status_message) == (
        STATUS_UNSET, "")
    assert (broken["http.server"].status_code, broken["http.server"].status_message) == (
        STATUS_ERROR, "unavailable")
    # The outgoing call answered 404: the SDK said not_found.
    assert (fine["http.client"].status_code, fine["http.client"].status_message) == (
        STATUS_ERROR, "not_found")
    assert fine["db"].status_code == STATUS_UNSET


def test_an_http_status_of_500_or_more_is_an_error_without_a_sentry_status(
        failed: dict[str, Any]) -> None:
    del failed["contexts"]["trace"]["status"]
    root = spans_of(failed)[0]
    assert failed["contexts"]["response"]["status_code"] == 503
    assert (root.status_code, root.status_message) == (STATUS_ERROR, "")


def test_semantic_attributes_make_a_request_a_database_call_and_an_http_call(
        ok: dict[str, Any]) -> None:
    batch = processed(spans_of(ok))
    spans = by_op(batch.spans)
    root = spans["http.server"]
    assert root.category == "http"
    assert root.semantic == {"http.request.method": "GET", "url.full": ok["request"]["url"],
                             "http.response.status_code": 200}
    [request] = batch.requests  # the performance page's rollups
    assert (request.method, request.route, request.status) == ("GET", "/orders/42", 200)
    assert (request.service, request.env, request.trace_id) == (
        "checkout", "staging", root.trace_id)

    db = spans["db"]
    assert db.category == "database"
    assert db.semantic == {"db.system.name": "sqlite", "db.query.text": "SELECT ? AS id",
                           "db.operation.name": "SELECT"}
    http = spans["http.client"]
    assert http.category == "http"
    assert http.semantic["http.request.method"] == "GET"
    assert http.semantic["url.full"] == ok["spans"][1]["data"]["url"]
    assert http.semantic["http.response.status_code"] == 404
    assert {spans[op].category for op in ("queue.publish", "queue.process")} == {"custom"}


def test_sentry_fields_data_and_tags_become_attributes(ok: dict[str, Any]) -> None:
    spans = by_op(spans_of(ok))
    root, http = spans["http.server"], spans["http.client"]
    assert root.attributes["sentry.origin"] == "auto.http.tornado"
    assert root.attributes["sentry.source"] == "component"
    assert root.attributes["service"] == "checkout"  # a tag
    assert root.attributes["thread.name"] == ok["contexts"]["trace"]["data"]["thread.name"]
    assert http.attributes["sentry.description"] == ok["spans"][1]["description"]
    assert http.attributes["http.query"] == "item=42"  # data
    assert http.attributes["status"] == "not_found"  # a tag of the span


def test_a_route_named_transaction_gives_the_route(ok: dict[str, Any]) -> None:
    ok["transaction"], ok["transaction_info"] = "/orders/{id}", {"source": "route"}
    batch = processed(spans_of(ok))
    assert batch.spans[0].semantic["http.route"] == "/orders/{id}"
    assert batch.requests[0].route == "/orders/{id}"


def test_a_client_span_without_url_data_takes_method_and_url_from_its_description(
        ok: dict[str, Any]) -> None:
    data = ok["spans"][1]["data"]
    for key in ("url", "http.method"):
        del data[key]
    ok["spans"][1]["description"] = "POST https://prices.example/v1?x=1"
    http = by_op(processed(spans_of(ok)).spans)["http.client"]
    assert (http.semantic["http.request.method"], http.semantic["url.full"]) == (
        "POST", "https://prices.example/v1?x=1")


def test_the_resource_says_service_environment_release_and_sdk(ok: dict[str, Any]) -> None:
    spans = spans_of(ok)
    assert spans[0].resource_attributes == {
        "service.name": "checkout", "deployment.environment.name": "staging",
        "service.version": "shop@1.2.3", "telemetry.sdk.name": ok["sdk"]["name"],
        "telemetry.sdk.version": ok["sdk"]["version"], "host.name": ok["server_name"]}
    assert all(span.resource_attributes is spans[0].resource_attributes for span in spans)


def test_data_values_are_scalars_lists_of_scalars_or_json_text(ok: dict[str, Any]) -> None:
    ok["spans"][0]["data"] = {"s": "x", "i": 7, "f": 0.5, "b": True, "big": 2**64,
                              "list": [1, "two", False], "nested": {"a": [1, {"b": 2}]},
                              "mixed": [1, [2]], "none": None,
                              **{f"k{i}": i for i in range(300)}}
    attributes = spans_of(ok)[1].attributes
    assert {k: attributes[k] for k in ("s", "i", "f", "b", "big", "list", "nested", "mixed")} \
        == {"s": "x", "i": 7, "f": 0.5, "b": True, "big": str(2**64),
            "list": [1, "two", False], "nested": '{"a":[1,{"b":2}]}', "mixed": "[1,[2]]"}
    assert "none" not in attributes
    assert len(attributes) == MAX_ATTRIBUTES


def test_a_span_without_valid_ids_or_times_is_dropped_alone(ok: dict[str, Any]) -> None:
    spans = ok["spans"]
    spans[0]["span_id"] = "not-hex-at-all!!"
    del spans[1]["timestamp"]
    spans[2]["start_timestamp"], spans[2]["timestamp"] = spans[2]["timestamp"], \
        spans[2]["start_timestamp"]  # ends before it starts
    spans.append("not a span")
    # Still kept: no trace id (its transaction's), an unreadable parent (under the root).
    del spans[3]["trace_id"]
    spans[3]["parent_span_id"] = 12
    decoded = decode_transaction(ok, NOW_US)
    assert decoded.dropped == 4
    assert [reason.split(":")[0] for reason in decoded.reasons] == [
        "spans[0]", "spans[1]", "spans[2]", "spans[4]"]
    root, kept = decoded.spans
    assert (kept.span_id, kept.trace_id, kept.parent_span_id) == (
        spans[3]["span_id"], root.trace_id, root.span_id)


def test_a_transaction_without_trace_context_drops_only_the_root(ok: dict[str, Any]) -> None:
    del ok["contexts"]["trace"]
    decoded = decode_transaction(ok, NOW_US)
    assert decoded.dropped == 1 and decoded.reasons[0].startswith("transaction:")
    assert len(decoded.spans) == 4  # each child carries its own trace id


def test_at_most_1000_spans_per_transaction(ok: dict[str, Any]) -> None:
    template = ok["spans"][0]
    ok["spans"] = [{**template, "span_id": f"{i + 1:016x}"} for i in range(MAX_SPANS + 5)]
    decoded = decode_transaction(ok, NOW_US)
    assert len(decoded.spans) == MAX_SPANS + 1 and decoded.dropped == 5


def test_spans_without_an_otlp_message_store_and_forward_with_their_values(
        ok: dict[str, Any]) -> None:
    batch = processed(spans_of(ok))
    for span in batch.spans:
        attributes, events = spanbody.decode(spanbody.encode(span))
        assert (attributes, events) == (span.attributes, [])
    stored = wire.encode_batch(batch)
    assert len(stored.spans) == len(batch.spans)
    request, failed = encode_spans(batch.spans)
    assert failed == 0
    [resource_spans] = request.resource_spans
    sent = resource_spans.scope_spans[0].spans
    assert [(s.span_id.hex(), s.parent_span_id.hex(), s.kind, s.status.code) for s in sent] \
        == [(s.span_id, s.parent_span_id, s.kind, s.status_code) for s in batch.spans]
    assert {kv.key for kv in sent[1].attributes} == set(batch.spans[1].attributes)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=20) | st.sampled_from(["ok", "http.server", "db", "2026-01-01",
                                             "0" * 32, "ab" * 8, "ab" * 16]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=20)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_never_raises_whatever_any_field_holds(sent: list[dict[str, Any]],
                                               data: st.DataObject) -> None:
    event = copy.deepcopy(data.draw(st.sampled_from(sent)))
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(_paths(event)))
        value = data.draw(JSON)
        if not path:
            event = value
            break
        holder = event
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = value
    decoded = decode_transaction(event, NOW_US)
    for span in decoded.spans:
        assert len(span.trace_id) == 32 and len(span.span_id) == 16
        assert 0 <= span.start_ns <= span.end_ns
        spanbody.encode(span)
