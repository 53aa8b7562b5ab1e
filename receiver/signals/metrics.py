"""OTLP metrics (POST /ingest/v1/metrics and /v1/metrics, MetricsService/Export).

As traces (receiver/signals/traces.py): the body stays encoded until the signal
decodes it, on the event loop or, from `decode_min_bytes` on, in a decode worker;
a data point that cannot be kept is dropped alone and counted, and the outcome
carries OTLP's partial success (`rejected_data_points`)."""

from __future__ import annotations

from receiver.decode_otlp_metrics import decode_metrics_body
from receiver.signals.outcome import Origin, Outcome
from receiver.signals.traces import OtlpBody
from sounding import metrics
from sounding.errors import InvalidInput
from sounding.pipeline import Pipeline

# What a decode worker runs on a large body: the same pure function as below.
DECODE_METRICS = "receiver.decode_otlp_metrics:decode_metrics_body"


def _count_dropped(dropped: int, kept: bool, reasons: list[str]) -> None:
    """Dropped points are counted; a request whose every point was dropped is
    InvalidInput (HTTP 400, gRPC INVALID_ARGUMENT)."""
    if dropped:
        metrics.DROPPED.labels("metrics", "invalid").inc(dropped)
        if not kept:
            raise InvalidInput("no data point in the request could be kept",
                               [{"field": reason.split(": ", 1)[0],
                                 "error": reason.split(": ", 1)[1]} for reason in reasons])


async def handle_metrics(pipeline: Pipeline, origin: Origin, document: OtlpBody) -> Outcome:
    body = document.data
    pool = pipeline.decode_pool
    if pool is not None and pool.wants(len(body)):
        metrics.OFFLOADED.inc()
        result = await pool.submit(DECODE_METRICS, (document.protobuf,), origin.new_batch(),
                                   "metrics", body)
        _count_dropped(result.dropped, result.results is not None, result.reasons)
        if result.results is not None:
            await pipeline.consume_prepared(result.results)
        return Outcome(dropped=result.dropped, reasons=tuple(result.reasons))
    decoded = decode_metrics_body(body, document.protobuf)
    _count_dropped(decoded.dropped, bool(decoded.metrics), decoded.reasons)
    batch = origin.new_batch()
    batch.metrics = decoded.metrics
    await pipeline.consume(batch)
    return Outcome(dropped=decoded.dropped, reasons=tuple(decoded.reasons))
