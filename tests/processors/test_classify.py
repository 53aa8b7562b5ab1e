"""Attribute classification from old and current semantic-convention names."""

from __future__ import annotations

import pytest

from model.records import Batch, Span
from processors.classify import ClassifyProcessor
from processors.spanmetrics import SpanMetricsProcessor


def span(attributes: dict[str, object] | None, kind: int = 3, **overrides: object) -> Span:
    values: dict[str, object] = dict(
        trace_id="a" * 32, span_id="b" * 16, parent_span_id="", name="op", kind=kind,
        start_ns=1_000_000_000, end_ns=1_250_000_000, status_code=0, status_message="",
        service_name="shop", scope_name="s", resource_attributes={}, attributes=attributes)
    values.update(overrides)
    return Span(**values)  # type: ignore[arg-type]


def classify(attributes: dict[str, object]) -> Span:
    batch = ClassifyProcessor("classify").process(Batch(project_id=1, spans=[span(attributes)]))
    return batch.spans[0]


@pytest.mark.parametrize(("attributes", "category"), [
    ({"http.method": "GET", "http.url": "https://x/y"}, "http"),
    ({"http.request.method": "POST", "url.full": "https://x/y"}, "http"),
    ({"http.response.status_code": 502}, "http"),
    ({"db.system": "postgresql", "db.statement": "SELECT 1"}, "database"),
    ({"db.system.name": "mysql", "db.query.text": "SELECT 1"}, "database"),
    ({"db.system": "elasticsearch", "http.method": "GET"}, "search"),
    ({"db.system.name": "opensearch"}, "search"),
    ({"messaging.system": "kafka", "messaging.destination.name": "orders"}, "messaging"),
    ({"app.feature": "checkout"}, "custom"),
    ({}, "custom"),
])
def test_category(attributes: dict[str, object], category: str) -> None:
    assert classify(attributes).category == category


def test_old_and_new_names_normalise_to_the_current_ones_and_attributes_stay() -> None:
    old = {"http.method": "GET", "http.status_code": 200, "http.url": "https://x/a",
           "db.operation": "SELECT", "custom.key": [1, 2]}
    result = classify(dict(old))
    assert result.semantic == {"http.request.method": "GET", "http.response.status_code": 200,
                               "url.full": "https://x/a", "db.operation.name": "SELECT"}
    assert result.attributes == old


def test_server_spans_with_http_feed_request_metrics() -> None:
    batch = Batch(project_id=1, spans=[
        span({"http.request.method": "get", "http.route": "/orders/:id",
              "http.response.status_code": 503}, kind=2,
             resource_attributes={"deployment.environment.name": "prod"}),
        span({"http.method": "GET"}, kind=3),  # a client span is not a served request
        span({"app": "x"}, kind=2),  # a server span without HTTP
    ])
    batch = SpanMetricsProcessor("spanmetrics").process(ClassifyProcessor("c").process(batch))
    (metric,) = batch.requests
    assert (metric.method, metric.route, metric.status, metric.env, metric.service) == (
        "GET", "/orders/:id", 503, "prod", "shop")
    assert metric.duration_ms == 250.0


# Every field, under its older name where it has one and under both names for two of
# them (the current name must win), and an empty string and a list as values.
EVERY_FIELD = {
    "http.method": "GET", "http.status_code": 200, "http.url": "https://x/a",
    "http.route": "/a", "http.target": "/a?b=1", "db.system": "postgresql",
    "db.statement": "SELECT 1", "db.operation.name": "SELECT", "db.operation": "INSERT",
    "messaging.system": "kafka", "messaging.destination.name": "",
    "net.peer.name": "db-1", "server.address": "db-2", "net.peer.port": 5432,
    "db.name": "shop", "db.sql.table": "orders", "peer.service": "billing",
    "url.template": ["/a/{id}"], "app.other": "x",
}
PEER_FIELDS = {"server.address", "server.port", "db.namespace", "db.collection.name",
               "peer.service", "url.template"}


def protobuf_span(attributes: dict[str, object], kind: int) -> Span:
    """A span as the OTLP decoder makes it: its attributes unread in the message."""
    from opentelemetry.proto.trace.v1 import trace_pb2

    from model.otlp_values import fill_key_values

    message = trace_pb2.Span(name="op", kind=kind)  # type: ignore[arg-type]
    fill_key_values(message.attributes, attributes)
    return span(None, kind=kind, otlp=message)


@pytest.mark.parametrize("kind", [0, 1, 2, 3, 4, 5])
def test_the_fields_read_per_kind_the_peers_only_where_a_peer_is_read(kind: int) -> None:
    """The peer's fields are read for client, producer and consumer spans (whose peer
    model/operations.py names), not for server and internal ones; from the message as
    from a dictionary, with the current name preferred, and the attributes left unread."""
    everything = {"http.request.method": "GET", "http.response.status_code": 200,
                  "url.full": "https://x/a", "http.route": "/a", "url.path": "/a?b=1",
                  "db.system.name": "postgresql", "db.query.text": "SELECT 1",
                  "db.operation.name": "SELECT", "messaging.system": "kafka",
                  "messaging.destination.name": "", "server.address": "db-2",
                  "server.port": 5432, "db.namespace": "shop",
                  "db.collection.name": "orders", "peer.service": "billing",
                  "url.template": ["/a/{id}"]}
    expected = everything if kind in (3, 4, 5) else {
        k: v for k, v in everything.items() if k not in PEER_FIELDS}
    unread = protobuf_span(EVERY_FIELD, kind)
    read = span(dict(EVERY_FIELD), kind=kind)
    ClassifyProcessor("classify").process(Batch(project_id=1, spans=[unread, read]))
    assert unread.semantic == read.semantic == expected
    assert unread.category == read.category == "database"
    assert unread.untouched
