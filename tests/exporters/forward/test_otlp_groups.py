"""exporters/forward/otlp_groups.py: records grouped by resource and scope."""

from __future__ import annotations

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from exporters.forward.otlp_groups import ScopeGroups
from model.otlp_values import attributes_of
from model.records import Span


def span(resource: dict[str, str], scope: str, service: str = "shop") -> Span:
    return Span("ab" * 16, "01" * 8, "", "GET /", 2, 1, 2, 0, "", service, scope, resource)


def test_records_of_one_resource_and_scope_share_their_messages() -> None:
    request = ExportTraceServiceRequest()
    groups = ScopeGroups(request.resource_spans, "scope_spans")
    shop, cart = {"service.name": "shop"}, {"service.name": "cart"}
    first = groups.scope_of(span(shop, "http"))
    assert groups.scope_of(span(shop, "http")) is first
    assert groups.scope_of(span(shop, "db")) is not first
    groups.scope_of(span(cart, "http", service="cart"))
    assert [[s.scope.name for s in r.scope_spans] for r in request.resource_spans] == [
        ["http", "db"], ["http"]]


def test_a_renamed_service_wins_and_a_scope_version_is_kept() -> None:
    request = ExportMetricsServiceRequest()
    groups = ScopeGroups(request.resource_metrics, "scope_metrics")
    resource = {"service.name": "shop", "host.name": "a"}
    scope = groups.scope_of(span(resource, "meter", service="renamed"), "1.2")
    (sent,) = request.resource_metrics
    assert attributes_of(sent.resource.attributes) == {"service.name": "renamed",
                                                        "host.name": "a"}
    assert (scope.scope.name, scope.scope.version) == ("meter", "1.2")
    assert resource == {"service.name": "shop", "host.name": "a"}  # not changed in place
