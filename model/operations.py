"""What operation a span is, and which peer it calls: the keys of the operation and
edge rollups (processors/operations.py folds spans into them, storage/writer/
operations.py adds them up, storage/queries/operations.py reads them).

An operation is `(kind, peer, name)` of one service:
- `server`: a server span that is not an HTTP request, by its name (an RPC method).
  HTTP server spans are the request rollups' (processors/spanmetrics.py), per method
  and route, which the operations page reads beside these;
- `consumer`: a consumer span, by its name, its peer the messaging destination;
- `client`: an HTTP or RPC call, by its peer (host and port, or `peer.service`) and
  its method (an HTTP method, with `url.template` when the span has one: a URL itself
  would make every call an operation of its own), or its name;
- `producer`: a message sent, by its destination and name;
- `database`: a database call, by its peer (system, address, namespace) and its
  normalised statement (model/statement.py), or the operation and collection it
  names when it carries no statement, or its name.

A peer is `(peer_type, peer)`: `service` (the span's `peer.service`: a service by
name), `database`, `messaging`, `http` or `host` (an address and nothing else), or
("", "") when the span names none. The service map draws each as a node, unless the
writer learned which service it is (storage/writer/peers.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from model.records import Span

SERVER, CONSUMER, CLIENT = "server", "consumer", "client"
PRODUCER, DATABASE = "producer", "database"
KINDS = (SERVER, CONSUMER, CLIENT, PRODUCER, DATABASE)
# Span kinds as OTLP numbers them.
_KIND_NAMES = {2: SERVER, 3: CLIENT, 4: PRODUCER, 5: CONSUMER}
PEER_SERVICE, PEER_DATABASE, PEER_MESSAGING, PEER_HTTP, PEER_HOST = (
    "service", "database", "messaging", "http", "host")
# The resource attributes that name a service's environment, the newer first.
ENV_ATTRIBUTES = ("deployment.environment.name", "deployment.environment")


def environment_of(resource: dict[str, Any]) -> str:
    """A resource's environment (ENV_ATTRIBUTES, the first set), "" when none."""
    return next((str(resource[a]) for a in ENV_ATTRIBUTES if a in resource), "")

# The lengths of the rollups' columns (storage/rows.py): longer values are cut.
SERVICE_LENGTH, PEER_LENGTH, OPERATION_LENGTH = 200, 500, 1000

# [count, error count, duration sum in ms, {latency bucket: count}] of one key.
Rollup = list[Any]


def _address(semantic: dict[str, Any]) -> str:
    host = semantic.get("server.address")
    if not host:
        url = semantic.get("url.full")
        if url:
            try:
                return urlsplit(str(url)).netloc.rpartition("@")[2]
            except ValueError:
                return ""
        return ""
    port = semantic.get("server.port")
    return f"{host}:{port}" if port not in (None, "") else str(host)


def peer_of(span: Span) -> tuple[str, str]:
    """The peer a client, producer or consumer span calls: (peer type, peer)."""
    semantic = span.semantic
    named = semantic.get("peer.service")
    if named:
        return PEER_SERVICE, str(named)[:SERVICE_LENGTH]
    system = semantic.get("db.system.name")
    if system is not None:
        address = _address(semantic)
        namespace = semantic.get("db.namespace")
        peer = str(system) + (f" {address}" if address else "")
        if namespace:
            peer += f"/{namespace}" if address else f" {namespace}"
        return PEER_DATABASE, peer[:PEER_LENGTH]
    destination = semantic.get("messaging.destination.name")
    if destination is not None or "messaging.system" in semantic:
        system = semantic.get("messaging.system") or "messaging"
        return PEER_MESSAGING, f"{system} {destination or ''}".strip()[:PEER_LENGTH]
    address = _address(semantic)
    if address:
        is_http = "http.request.method" in semantic or "url.full" in semantic
        return (PEER_HTTP if is_http else PEER_HOST), address[:PEER_LENGTH]
    return "", ""


def operation_of(span: Span, normalize: Callable[[str], str]) -> tuple[str, str, str, str] | None:
    """(kind, peer type, peer, operation name) of a span, or None for a span that is
    no operation here (internal spans, HTTP server spans: see the module's docstring).
    `normalize` is model/statement.py's (or its remembering `Normalizer`)."""
    kind = _KIND_NAMES.get(span.kind)
    if kind is None:
        return None
    semantic = span.semantic
    if kind == SERVER:
        if semantic.get("http.request.method"):
            return None
        return SERVER, "", "", span.name[:OPERATION_LENGTH]
    peer_type, peer = peer_of(span)
    if peer_type == PEER_DATABASE:
        statement = semantic.get("db.query.text")
        if isinstance(statement, str) and statement.strip():
            name = normalize(statement)
        else:
            operation = semantic.get("db.operation.name")
            collection = semantic.get("db.collection.name")
            name = " ".join(str(p) for p in (operation, collection) if p) or span.name
        return DATABASE, peer_type, peer, name[:OPERATION_LENGTH]
    if kind == CLIENT:
        method = semantic.get("http.request.method")
        if method:
            template = semantic.get("url.template")
            name = f"{str(method).upper()} {template}" if template else str(method).upper()
            return CLIENT, peer_type, peer, name[:OPERATION_LENGTH]
    return kind, peer_type, peer, span.name[:OPERATION_LENGTH]


def add(rollups: dict[tuple[Any, ...], Rollup], key: tuple[Any, ...], error: bool,
        duration_ms: float, bucket: int) -> None:
    """Count one span of `key` into `rollups`."""
    agg = rollups.get(key)
    if agg is None:
        rollups[key] = [1, int(error), duration_ms, {bucket: 1}]
        return
    agg[0] += 1
    agg[1] += error
    agg[2] += duration_ms
    buckets = agg[3]
    buckets[bucket] = buckets.get(bucket, 0) + 1
