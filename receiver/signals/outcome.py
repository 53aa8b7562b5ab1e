"""What a door hands a signal besides the document (Origin), and what it gets back
(Outcome), in no protocol's terms: each door answers an Outcome in its own form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from model import limits
from model.records import Batch
from runtime import drops, usage

TraceLink = tuple[str, str] | None
Rejected = list[dict[str, Any]]


@dataclass(slots=True)
class Origin:
    """Who sent the document, and how it came."""

    project_id: int
    # Bytes of the request as received: the batch's share of the queue's byte bound.
    size: int
    # (trace id, span id) of the `traceparent` header or metadata entry, if valid.
    trace_link: TraceLink = None
    # The client's address (HTTP: the connection's, or what a trusted proxy said).
    client_ip: str | None = None

    def new_batch(self) -> Batch:
        return Batch(project_id=self.project_id, approx_bytes=self.size,
                     client_ip=self.client_ip)


@dataclass(frozen=True, slots=True)
class BatchResult:
    """A batch whose valid items were kept and the others refused one by one."""

    accepted: int
    rejected: Rejected  # {"index": i, "details": [{"field", "error"}, ...]} per item

    def as_json(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "rejected": len(self.rejected),
                "rejected_items": self.rejected}


@dataclass(frozen=True, slots=True)
class Outcome:
    """A document committed, in one of three forms. All kept: HTTP 202 with an
    empty body (gRPC `Accepted`). A batch answered item by item (`batch`): HTTP 202
    with the counts and the refused items (gRPC `BatchResult`), even when none was
    refused, so that a client reads one shape. Records dropped alone (`dropped`,
    with the first reasons): OTLP's partial success, `partial_success` in the reply
    message, over HTTP a 202 whose body is that message in the request's media type.
    A document with nothing to keep is not an outcome: the signal raises InvalidInput
    (400, INVALID_ARGUMENT)."""

    batch: BatchResult | None = None
    dropped: int = 0
    reasons: tuple[str, ...] = ()


ACCEPTED = Outcome()


def batch_outcome(signal: str, accepted: int, rejected: Rejected,
                  origin: Origin | None = None) -> Outcome:
    """The outcome of a batch answered item by item; the refused items are counted
    (`signal` is the metric's label: errors, requests; and in the project's usage, by
    its limit category), never logged one by one."""
    drops.count({signal: len(rejected)}, drops.INVALID)
    if origin is not None and rejected:
        usage.count(origin.project_id, limits.BATCH_FIELDS[signal], limits.INVALID,
                    len(rejected))
    return Outcome(batch=BatchResult(accepted, rejected))
