"""Operation and edge rollups from spans (part of the spanmetrics processor): each
server (other than HTTP), consumer, client, producer and database span counted into
its batch's per-minute rollups
(model/operations.py says what key each gets), and the halves of calls between
services noted for the writer to pair (storage/writer/peers.py). Runs after classify,
whose semantic fields it reads; HTTP server spans are spanmetrics' request rollups.

When the project's performance detectors are on, it also notes the spans they read
(processors/tracefacts.py): database and HTTP calls, and the local roots (server and
consumer spans, a trace's root) that name the transaction they run in.

Latency buckets are coarse (model/histogram.py: quantiles within 5%), per minute as
per hour: an operation's spans spread over dozens of fine buckets, and adding them up
was most of the writer's cost of these rollups (storage/writer/operations.py).

Folded here, per batch, rather than in the writer: this runs in as many processes as
decode the requests, the writer in one, and a batch of a service's spans holds a
handful of operations, so the writer adds a few rows per batch instead of a row per
span.
"""

from __future__ import annotations

import math
from typing import Any

from model import histogram
from model.operations import (
    CLIENT,
    CONSUMER,
    DATABASE,
    PEER_SERVICE,
    SERVER,
    SERVICE_LENGTH,
    add,
    environment_of,
    operation_of,
)
from model.records import (
    SPAN_KIND_CLIENT,
    SPAN_KIND_CONSUMER,
    SPAN_KIND_PRODUCER,
    SPAN_KIND_SERVER,
    STATUS_CODE_ERROR,
    Batch,
    Span,
)
from model.statement import Normalizer
from processors.tracefacts import FactNoter

CALLER, CALLEE = 1, 2  # storage/rows.py's LINKS roles
_CALLEE_KINDS = (SPAN_KIND_SERVER, SPAN_KIND_CONSUMER)
_OPERATION_KINDS = frozenset({SPAN_KIND_SERVER, SPAN_KIND_CLIENT, SPAN_KIND_PRODUCER,
                              SPAN_KIND_CONSUMER})
# Kinds that call no peer: a consumer's destination is its peer, but the edge into
# it is the producer's.
_NO_EDGE = (SERVER, CONSUMER)


class OperationFolder:
    """Counts a batch's spans into its operation and edge rollups and notes the halves
    of calls (see the module's docstring). Remembers, for the last few thousand kinds
    of span (kind, name and semantic fields alike), what operation they are: deriving
    it (the peer's name, the statement's shape) costs several times the look-up, and a
    service's spans are a few kinds repeated. A memo, not state any count depends on."""

    MEMO = 4096

    def __init__(self) -> None:
        self.normalize = Normalizer()
        self._memo: dict[tuple[Any, ...], tuple[str, str, str, str] | None] = {}

    def _operation(self, span: Span) -> tuple[str, str, str, str] | None:
        semantic = span.semantic
        try:
            # Flat, the fields' names then their values (their number tells where the
            # values start): cheaper to build, hash and compare than a pair per field.
            key: tuple[Any, ...] | None = (span.kind, span.name, *semantic, *semantic.values())
            found = self._memo.get(key)  # type: ignore[arg-type]
        except TypeError:  # a list among the values: derived every time
            key, found = None, None
        if found is None:
            found = operation_of(span, self.normalize)
            if key is not None:
                if len(self._memo) >= self.MEMO:
                    self._memo.clear()
                self._memo[key] = found
        return found

    def fold(self, batch: Batch, facts: FactNoter | None = None) -> None:
        """Fold the batch's spans; with `facts`, note what the detectors read too."""
        operations, edges, links = batch.operations, batch.edges, batch.links
        log, log_coarse, min_ms = math.log, histogram.LOG_COARSE_GAMMA, histogram.MIN_MS
        min_bucket = histogram.coarse_of(histogram.MIN_BUCKET)
        # Per resource: its spans share one dictionary.
        labels: dict[int, tuple[str, str]] = {}
        operation = self._operation
        for span in batch.spans:
            kind = span.kind
            if kind not in _OPERATION_KINDS:
                if facts is not None and not span.parent_span_id:
                    facts.root(span, span.name)  # a trace's root
                continue
            if kind in _CALLEE_KINDS:
                if span.parent_span_id:
                    links.append((span.trace_id, span.parent_span_id, CALLEE,
                                  span.service_name[:SERVICE_LENGTH], "", ""))
                if kind == SPAN_KIND_SERVER and "http.request.method" in span.semantic:
                    continue  # spanmetrics' request rollups (and its root fact)
                if facts is not None:
                    facts.root(span, span.name)
            found = operation(span)
            if found is None:
                continue
            op_kind, peer_type, peer, name = found
            resource = span.resource_attributes
            label = labels.get(id(resource))
            if label is None:
                label = labels[id(resource)] = (span.service_name[:SERVICE_LENGTH],
                                                environment_of(resource)[:200])
            service, env = label
            minute = span.start_ns // 60_000_000_000 * 60
            duration_ms = (span.end_ns - span.start_ns) / 1_000_000
            if duration_ms < 0:  # max(..., 0) without the call: this runs for most spans
                duration_ms = 0.0
            error = span.status_code == STATUS_CODE_ERROR
            # The coarse bucket (histogram.coarse_of(histogram.bucket_of(ms))), inlined:
            # this runs for most spans.
            bucket = (min_bucket if duration_ms <= min_ms
                      else math.ceil(log(duration_ms) / log_coarse))
            add(operations, (service, env, op_kind, peer, name, minute), error, duration_ms,
                bucket)
            if facts is not None:
                if op_kind == DATABASE:
                    facts.database(span, name, service)
                elif op_kind == CLIENT:
                    facts.http(span, peer, service)
            if op_kind in _NO_EDGE or not peer_type:
                continue
            add(edges, (service, env, peer_type, peer, minute), error, duration_ms, bucket)
            if op_kind != DATABASE and peer_type != PEER_SERVICE:
                links.append((span.trace_id, span.span_id, CALLER, service, peer_type, peer))

