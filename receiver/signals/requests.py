"""Request metrics (POST /ingest/requests, RequestService.ReportBatch): a batch
answered item by item."""

from __future__ import annotations

from typing import Any

from model.timeutil import now_us
from receiver.custom.decode import decode_request_batch
from receiver.signals.outcome import Origin, Outcome, batch_outcome
from runtime.pipeline import Pipeline


async def handle_requests(pipeline: Pipeline, origin: Origin, document: Any) -> Outcome:
    requests, rejected = decode_request_batch(document, now_us(), origin.trace_link)
    batch = origin.new_batch()
    batch.requests.extend(requests)
    await pipeline.consume(batch)
    return batch_outcome("requests", len(requests), rejected, origin)
