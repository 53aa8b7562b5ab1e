"""OTLP metrics (POST /ingest/v1/metrics and /v1/metrics, MetricsService/Export):
decoded as traces are (receiver/signals/otlp.py), a large body in a decode worker. A
data point that cannot be kept is dropped alone and counted; the outcome carries
OTLP's partial success (`rejected_data_points`)."""

from __future__ import annotations

from receiver.otlp.decode_metrics import decode_metrics_body
from receiver.signals.otlp import OtlpBody, OtlpDecode, handle_otlp
from receiver.signals.outcome import Origin, Outcome
from runtime.pipeline import Pipeline

_DECODE = OtlpDecode(decode_metrics_body, "metrics", "metrics", "data point")


async def handle_metrics(pipeline: Pipeline, origin: Origin, document: OtlpBody) -> Outcome:
    return await handle_otlp(_DECODE, pipeline, origin, document)
