"""Attribute classification: what kind of operation a span is.

Reads both the older and the current semantic-convention names and records the
recognised values under the current names in `span.semantic`; the attributes
themselves are kept exactly as they came.
"""

from __future__ import annotations

from typing import Any

from model.component import Processor
from model.records import Batch

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
# Every attribute name the fields above are read from.
SEMANTIC_NAMES = frozenset(name for names in SEMANTIC_FIELDS.values() for name in names)
SEARCH_SYSTEMS = frozenset({"elasticsearch", "opensearch"})
HTTP_FIELDS = ("http.request.method", "http.response.status_code", "url.full", "http.route")

CATEGORIES = ("http", "database", "search", "messaging", "custom")


# Each attribute name: the field it gives, and its rank among that field's names (0:
# the current name).
_FIELD_OF: dict[str, tuple[str, int]] = {
    name: (current, rank) for current, names in SEMANTIC_FIELDS.items()
    for rank, name in enumerate(names)}


def semantic_fields(attributes: dict[str, Any]) -> dict[str, Any]:
    """The fields the span's attributes give, each from its best-ranked name. Walks
    the few attributes found rather than every name of every field: a span carries
    two to four of them, and this runs once per span."""
    found: dict[str, Any] = {}
    ranks: dict[str, int] = {}
    for name, value in attributes.items():
        field = _FIELD_OF.get(name)
        if field is None or value is None:
            continue
        current, rank = field
        if rank < ranks.get(current, len(SEMANTIC_FIELDS[current])):
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
            # Only the attributes it needs: the rest stay unread (see Span).
            span.semantic = semantic_fields(span.find_attributes(SEMANTIC_NAMES))
            span.category = category_of(span.semantic)
        return batch
