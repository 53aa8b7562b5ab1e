"""OTLP traces (POST /ingest/v1/traces and /v1/traces, TraceService/Export).

The document is the request still encoded (OtlpBody): a large one is decoded and
processed by a decode worker (sounding/offload.py), a small one here, so decoding
belongs to the signal rather than to the door. A span that cannot be kept is
dropped alone and counted; the outcome carries OTLP's partial success."""

from __future__ import annotations

from dataclasses import dataclass

from receiver.decode_otlp import decode_traces_body
from receiver.signals.outcome import Origin, Outcome
from sounding import metrics
from sounding.errors import InvalidInput
from sounding.pipeline import Pipeline

# What a decode worker runs on a large body: the same pure function as below.
DECODE_TRACES = "receiver.decode_otlp:decode_traces_body"


@dataclass(frozen=True, slots=True)
class OtlpBody:
    """An OTLP request as it came: protobuf, or OTLP/JSON."""

    data: bytes
    protobuf: bool


def _count_dropped(dropped: int, kept: bool, reasons: list[str]) -> None:
    """Dropped spans are counted; a request whose every span was dropped is InvalidInput
    (HTTP 400, gRPC INVALID_ARGUMENT)."""
    if dropped:
        metrics.DROPPED.labels("spans", "invalid").inc(dropped)
        if not kept:
            raise InvalidInput("no span in the request could be kept",
                               [{"field": reason.split(": ", 1)[0],
                                 "error": reason.split(": ", 1)[1]} for reason in reasons])


async def handle_traces(pipeline: Pipeline, origin: Origin, document: OtlpBody) -> Outcome:
    body = document.data
    pool = pipeline.decode_pool
    if pool is not None and pool.wants(len(body)):
        metrics.OFFLOADED.inc()
        result = await pool.submit(DECODE_TRACES, (document.protobuf,), origin.new_batch(),
                                   "spans", body)
        _count_dropped(result.dropped, result.results is not None, result.reasons)
        if result.results is not None:
            await pipeline.consume_prepared(result.results)
        return Outcome(dropped=result.dropped, reasons=tuple(result.reasons))
    decoded = decode_traces_body(body, document.protobuf)
    _count_dropped(decoded.dropped, bool(decoded.spans), decoded.reasons)
    batch = origin.new_batch()
    batch.spans = decoded.spans
    await pipeline.consume(batch)
    return Outcome(dropped=decoded.dropped, reasons=tuple(decoded.reasons))
