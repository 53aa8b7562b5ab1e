"""OTLP logs (POST /ingest/v1/logs and /v1/logs, LogsService/Export): decoded as
traces are (receiver/signals/otlp.py), a large body in a decode worker. A record
that cannot be kept is dropped alone and counted; the outcome carries OTLP's
partial success (`rejected_log_records`)."""

from __future__ import annotations

from model.timeutil import now_us
from receiver.otlp.decode_logs import decode_logs_body
from receiver.signals.otlp import OtlpBody, OtlpDecode, handle_otlp
from receiver.signals.outcome import Origin, Outcome
from runtime.pipeline import Pipeline

_DECODE = OtlpDecode(decode_logs_body, "logs", "logs", "log record")


async def handle_logs(pipeline: Pipeline, origin: Origin, document: OtlpBody) -> Outcome:
    # The time received: the observed time of records that came without one.
    return await handle_otlp(_DECODE, pipeline, origin, document, now_us() * 1000)
