"""The wire form of a batch, built in the collector process for the writer process.

Plain tuples of plain values, in the order the writer binds them, with JSON
columns already serialised and span bodies already encoded: text and bytes pickle
and unpickle far cheaper than the dictionaries they came from. Kept apart from
storage/writer.py so that the writer process, which only unpickles these tuples,
does not import the record types and the OTLP protobuf modules (8 MB).
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sounding.records import Batch
from storage import spanbody
from storage.jsontext import dumps
from storage.writer import BatchWriter, WireBatch


def encode_batch(batch: Batch) -> WireBatch:
    """The batch as tuples of plain values, JSON columns already serialised, in the
    order the writer binds them. Text pickles and unpickles far cheaper than the
    dictionaries it came from, so this is also the cheapest form to hand over."""
    project_id = batch.project_id
    # One resource is shared by many spans: serialised and hashed once per batch.
    resource_ids: dict[int, int] = {}
    resources = []
    spans = []
    fromhex = bytes.fromhex
    for s in batch.spans:
        resource = resource_ids.get(id(s.resource_attributes))
        if resource is None:
            text = dumps(s.resource_attributes)
            resource = resource_ids[id(s.resource_attributes)] = spanbody.resource_id(
                project_id, text)
            resources.append((resource, text))
        spans.append((fromhex(s.trace_id), fromhex(s.span_id), fromhex(s.parent_span_id),
                      s.name, s.kind, s.start_ns, s.end_ns, s.status_code, s.status_message,
                      s.service_name, s.scope_name, s.category or "custom", resource,
                      spanbody.encode(s)))
    errors = []
    for e in batch.errors:
        sc = e.source_context
        errors.append((e.fingerprint, e.ts_us, e.exception_class, e.message, dumps(e.backtrace),
                       None if e.params is None else dumps(e.params),
                       None if sc is None else dumps({
                           "file": sc.file, "lineno": sc.lineno, "context_line": sc.context_line,
                           "pre_context": sc.pre_context, "post_context": sc.post_context}),
                       e.request_id, e.user_id, e.trace_id, e.span_id))
    deploys = [(d.git_sha, d.version, d.env, d.deployer, d.description, d.ts_us)
               for d in batch.deploys]
    requests = [(r.service, r.env, r.method, r.route, r.ts_us, r.status, r.duration_ms)
                for r in batch.requests]
    groups = [(g.fingerprint, g.exception_class, g.message, g.count, g.first_seen_us,
               g.last_seen_us, g.hourly) for g in batch.groups.values()]
    return (project_id, spans, errors, deploys, requests, groups,
            list(batch.reopen_after.items()), resources)


@dataclass(slots=True)
class EncodedBatch:
    """A wire batch already pickled, as the exporter hands it to the writer process.
    Built by the event loop, or by a decode worker (sounding/offload.py), in which
    case the event loop passes it on without unpickling it."""

    payload: bytes
    records: int  # records in the batch, for the queue's bound
    counts: dict[str, int]  # records per signal, for the accepted/refused counters
    size: int  # bytes of the request body, for the queue's bound
    empty: bool  # nothing to write: no record and nothing derived


def encode(batch: Batch) -> EncodedBatch:
    wire = encode_batch(batch)
    return EncodedBatch(pickle.dumps(wire, protocol=pickle.HIGHEST_PROTOCOL),
                        batch.record_count(), wire_records(wire), max(batch.approx_bytes, 0),
                        batch.record_count() == 0 and not batch.groups
                        and not batch.reopen_after)


def wire_records(wire: WireBatch) -> dict[str, int]:
    """Records per signal in a wire batch, for the accepted/refused counters."""
    return {"spans": len(wire[1]), "errors": len(wire[2]), "deploys": len(wire[3]),
            "requests": len(wire[4])}


def write_batches(conn: Any, batches: Sequence[Batch], received_us: int) -> None:
    """Write record batches inside an open SQLAlchemy transaction (tools and tests)."""
    cursor = conn.connection.cursor()
    try:
        BatchWriter(conn.dialect.name).write(cursor, [encode_batch(b) for b in batches],
                                             received_us)
    finally:
        cursor.close()
