"""Operation and edge rollups from spans (part of the spanmetrics processor): each
server (other than HTTP), consumer, client, producer and database span counted into
its batch's per-minute rollups
(model/operations.py says what key each gets), and the halves of calls between
services noted for the writer to pair (storage/writer/peers.py). Runs after classify,
whose semantic fields it reads; HTTP server spans are spanmetrics' request rollups.

Folded here, per batch, rather than in the writer: this runs in as many processes as
decode the requests, the writer in one, and a batch of a service's spans holds a
handful of operations, so the writer adds a few rows per batch instead of a row per
span.
"""

from __future__ import annotations

from model import histogram
from model.operations import (
    CONSUMER,
    DATABASE,
    PEER_SERVICE,
    SERVER,
    SERVICE_LENGTH,
    add,
    operation_of,
)
from model.records import (
    SPAN_KIND_CONSUMER,
    SPAN_KIND_SERVER,
    STATUS_CODE_ERROR,
    Batch,
)
from model.statement import Normalizer

ENV_ATTRIBUTES = ("deployment.environment.name", "deployment.environment")

CALLER, CALLEE = 1, 2  # storage/rows.py's LINKS roles
_CALLEE_KINDS = (SPAN_KIND_SERVER, SPAN_KIND_CONSUMER)
# Kinds that call no peer: a consumer's destination is its peer, but the edge into
# it is the producer's.
_NO_EDGE = (SERVER, CONSUMER)


def fold_operations(batch: Batch, normalize: Normalizer) -> None:
    """Count the batch's spans into its operation and edge rollups, and note the
    halves of calls (see the module's docstring)."""
    operations, edges, links = batch.operations, batch.edges, batch.links
    bucket_of = histogram.bucket_of
    envs: dict[int, str] = {}  # per resource: its spans share one dictionary
    for span in batch.spans:
        if span.kind in _CALLEE_KINDS and span.parent_span_id:
            links.append((span.trace_id, span.parent_span_id, CALLEE,
                          span.service_name[:SERVICE_LENGTH], "", ""))
        found = operation_of(span, normalize)
        if found is None:
            continue
        kind, peer_type, peer, name = found
        resource = span.resource_attributes
        env = envs.get(id(resource))
        if env is None:
            env = envs[id(resource)] = next(
                (str(resource[a])[:200] for a in ENV_ATTRIBUTES if a in resource), "")
        service = span.service_name[:SERVICE_LENGTH]
        minute = span.start_ns // 60_000_000_000 * 60
        duration_ms = max(span.end_ns - span.start_ns, 0) / 1_000_000
        error = span.status_code == STATUS_CODE_ERROR
        bucket = bucket_of(duration_ms)
        add(operations, (service, env, kind, peer, name, minute), error, duration_ms, bucket)
        if kind in _NO_EDGE or not peer_type:
            continue
        add(edges, (service, env, peer_type, peer, minute), error, duration_ms, bucket)
        if kind != DATABASE and peer_type != PEER_SERVICE:
            links.append((span.trace_id, span.span_id, CALLER, service, peer_type, peer))
