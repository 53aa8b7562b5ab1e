"""Records grouped by resource and scope inside an OTLP export request, as the
forward exporter's encoders build them for spans (encode.py), log records
(encode_logs.py) and metric points (encode_metrics.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from model.otlp_values import fill_key_values


class ScopeGroups:
    """The scope message (ScopeSpans, ScopeLogs, ScopeMetrics) each record goes in.

    `resources` is the request's repeated field of resource messages
    (request.resource_spans, ...), `scopes` the name of the field of scope messages
    in one (scope_spans, ...). Records of one resource share its attributes dict
    (the decoders make one per resource), so the dict's identity groups them without
    hashing its contents; a stage that renamed the service is honoured, since the
    record's service_name wins over the attributes'."""

    __slots__ = ("_resources", "_scopes", "_by_resource", "_by_scope")

    def __init__(self, resources: Any, scopes: str) -> None:
        self._resources = resources
        self._scopes = scopes
        self._by_resource: dict[tuple[int, str], Any] = {}
        self._by_scope: dict[tuple[Any, ...], Any] = {}

    def scope_of(self, record: Any, version: str = "") -> Any:
        """The scope message for `record` (resource_attributes, service_name,
        scope_name), made with its resource on first use; `version` is the scope's
        version, where the record keeps one."""
        resource_key = (id(record.resource_attributes), record.service_name)
        resource = self._by_resource.get(resource_key)
        if resource is None:
            resource = self._by_resource[resource_key] = self._resources.add()
            attributes = dict(record.resource_attributes)
            if attributes.get("service.name", "unknown_service") != record.service_name:
                attributes["service.name"] = record.service_name  # renamed by a stage
            fill_key_values(resource.resource.attributes, attributes, depth=4)
        scope_key = (*resource_key, record.scope_name, version)
        scope = self._by_scope.get(scope_key)
        if scope is None:
            scope = self._by_scope[scope_key] = getattr(resource, self._scopes).add()
            scope.scope.name = record.scope_name
            if version:
                scope.scope.version = version
        return scope

    def add_each(self, records: Iterable[Any], field: str, fill: Callable[[Any, Any], None],
                 refused: tuple[type[Exception], ...]) -> int:
        """Add one message per record to its scope's repeated `field` (spans,
        log_records) and `fill(message, record)` it; a record `fill` refuses with one of
        `refused` is taken out again. Returns how many were refused."""
        failed = 0
        for record in records:
            messages = getattr(self.scope_of(record), field)
            try:
                fill(messages.add(), record)
            except refused:
                del messages[-1]
                failed += 1
        return failed
