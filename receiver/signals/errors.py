"""Errors: one (POST /ingest/errors, ErrorService.Report) or a batch answered item
by item (POST /ingest/errors/batch, ErrorService.ReportBatch). The document is the
JSON value of the HTTP body, or the gRPC message turned into the same value."""

from __future__ import annotations

from typing import Any

from model.timeutil import now_us
from receiver.custom.decode import decode_error, decode_error_batch
from receiver.signals.outcome import ACCEPTED, Origin, Outcome, batch_outcome
from runtime.pipeline import Pipeline


async def handle_error(pipeline: Pipeline, origin: Origin, document: Any) -> Outcome:
    batch = origin.new_batch()
    batch.errors.append(decode_error(document, now_us(), origin.trace_link))
    await pipeline.consume(batch)
    return ACCEPTED


async def handle_error_batch(pipeline: Pipeline, origin: Origin, document: Any) -> Outcome:
    errors, rejected = decode_error_batch(document, now_us(), origin.trace_link)
    batch = origin.new_batch()
    batch.errors.extend(errors)
    await pipeline.consume(batch)
    return batch_outcome("errors", len(errors), rejected, origin)
