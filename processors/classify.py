"""Attribute classification: what kind of operation a span is.

Reads both the older and the current semantic-convention names and records the
recognised values under the current names in `span.semantic`; the attributes
themselves are kept exactly as they came.

The peer's fields (PEER_FIELDS) are read only for the span kinds whose peer anything
looks at (PEER_KINDS: model/operations.py's peer_of, for client, producer and consumer
spans; database calls are client spans). A server or internal span's `semantic` then
lacks them, which changes no rollup: the operation of a server span is its name, an
internal span is none; there they would be read for nothing.
"""

from __future__ import annotations

from typing import Any

from model.component import Processor
from model.otlp_values import any_value
from model.records import SPAN_KIND_CLIENT, SPAN_KIND_CONSUMER, SPAN_KIND_PRODUCER, Batch, Span

# Current name first, then the older names it replaced.
SEMANTIC_FIELDS: dict[str, tuple[str, ...]] = {
    "http.request.method": ("http.request.method", "http.method"),
    "http.response.status_code": ("http.response.status_code", "http.status_code"),
    "url.full": ("url.full", "http.url"),
    "http.route": ("http.route",),
    "url.path": ("url.path", "http.target"),
    "db.system.name": ("db.system.name", "db.system"),
    "db.query.text": ("db.query.text", "db.statement"),
    "db.operation.name": ("db.operation.name", "db.operation"),
    "messaging.system": ("messaging.system",),
    "messaging.destination.name": ("messaging.destination.name",),
    # The peer a client span calls and what it does there (model/operations.py).
    "server.address": ("server.address", "net.peer.name"),
    "server.port": ("server.port", "net.peer.port"),
    "db.namespace": ("db.namespace", "db.name"),
    "db.collection.name": ("db.collection.name", "db.sql.table"),
    "peer.service": ("peer.service",),
    "url.template": ("url.template",),
}
# The fields of the peer a span calls: read for PEER_KINDS only (see the module).
PEER_FIELDS = ("server.address", "server.port", "db.namespace", "db.collection.name",
               "peer.service", "url.template")
PEER_KINDS = frozenset({SPAN_KIND_CLIENT, SPAN_KIND_PRODUCER, SPAN_KIND_CONSUMER})
SEARCH_SYSTEMS = frozenset({"elasticsearch", "opensearch"})
HTTP_FIELDS = ("http.request.method", "http.response.status_code", "url.full", "http.route")

CATEGORIES = ("http", "database", "search", "messaging", "custom")


# Each attribute name: the field it gives, and its rank among that field's names (0:
# the current name); every field's (for PEER_KINDS), and all but the peer's.
FieldOf = dict[str, tuple[str, int]]
_FIELD_OF: FieldOf = {
    name: (current, rank) for current, names in SEMANTIC_FIELDS.items()
    for rank, name in enumerate(names)}
_OWN_FIELD_OF: FieldOf = {
    name: field for name, field in _FIELD_OF.items() if field[0] not in PEER_FIELDS}
_UNRANKED = len(max(SEMANTIC_FIELDS.values(), key=len))  # below every rank


def fields_of(kind: int) -> FieldOf:
    """The names read of a span of this kind (see the module)."""
    return _FIELD_OF if kind in PEER_KINDS else _OWN_FIELD_OF


def semantic_fields(attributes: dict[str, Any], field_of: FieldOf = _FIELD_OF
                    ) -> dict[str, Any]:
    """The fields the span's attributes give, each from its best-ranked name. Walks
    the few attributes found rather than every name of every field: a span carries
    two to four of them, and this runs once per span."""
    found: dict[str, Any] = {}
    ranks: dict[str, int] = {}
    for name, value in attributes.items():
        field = field_of.get(name)
        if field is None or value is None:
            continue
        current, rank = field
        if rank < ranks.get(current, _UNRANKED):
            found[current] = value
            ranks[current] = rank
    return found


def semantic_fields_unread(pairs: Any, field_of: FieldOf) -> dict[str, Any]:
    """semantic_fields of attributes still in their OTLP KeyValues (`pairs`), reading
    only the values of the names in `field_of`: the same rule, in one pass, without
    the dictionary of found attributes between (the most of this stage's cost at
    hundreds of thousands of spans a second)."""
    found: dict[str, Any] = {}
    ranks: dict[str, int] = {}
    for kv in pairs:
        field = field_of.get(kv.key)
        if field is None:
            continue
        value = kv.value
        # Most values are text: a non-empty string_value is one, without asking the
        # oneof which (an empty one reads as any_value reads it).
        text = value.string_value
        if text:
            value = text
        else:
            value = any_value(value)
            if value is None:
                continue
        current, rank = field
        if rank < ranks.get(current, _UNRANKED):
            found[current] = value
            ranks[current] = rank
    return found


def category_of(semantic: dict[str, Any]) -> str:
    # A search or database client often carries HTTP attributes too (Elasticsearch
    # speaks HTTP); the database system is the more specific answer.
    system = semantic.get("db.system.name")
    if system is not None:
        return "search" if str(system).lower() in SEARCH_SYSTEMS else "database"
    if "messaging.system" in semantic:
        return "messaging"
    if any(name in semantic for name in HTTP_FIELDS):
        return "http"
    return "custom"


class ClassifyProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def process(self, batch: Batch) -> Batch:
        for span in batch.spans:
            span.semantic = semantic = semantic_of(span)
            span.category = category_of(semantic)
        return batch


def semantic_of(span: Span) -> dict[str, Any]:
    # Only the attributes it needs, from the message while the span is unread: the
    # rest stay unread (see Span).
    field_of = fields_of(span.kind)
    pairs = span.unread_attributes()
    if pairs is not None:
        return semantic_fields_unread(pairs, field_of)
    return semantic_fields(span.attributes, field_of)
