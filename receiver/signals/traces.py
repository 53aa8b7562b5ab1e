"""OTLP traces (POST /ingest/v1/traces and /v1/traces, TraceService/Export).

The document is the request still encoded (OtlpBody): a large one is decoded and
processed by a decode worker (runtime/offload.py), a small one here, so decoding
belongs to the signal rather than to the door (receiver/signals/otlp.py). A span
that cannot be kept is dropped alone and counted; the outcome carries OTLP's
partial success."""

from __future__ import annotations

from receiver.otlp.decode_traces import decode_traces_body
from receiver.signals.otlp import OtlpBody, OtlpDecode, handle_otlp
from receiver.signals.outcome import Origin, Outcome
from runtime.pipeline import Pipeline

__all__ = ["OtlpBody", "handle_traces"]

_DECODE = OtlpDecode(decode_traces_body, "spans", "spans", "span")


async def handle_traces(pipeline: Pipeline, origin: Origin, document: OtlpBody) -> Outcome:
    return await handle_otlp(_DECODE, pipeline, origin, document)
