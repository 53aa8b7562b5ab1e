"""Sounding's own ingest endpoints: errors, error batches, deploys, request metrics.
Thin handlers: decode (receiver/decode_custom.py), then hand to the pipeline."""

from __future__ import annotations

from typing import Any

from receiver.decode_custom import (
    decode_deploy,
    decode_error,
    decode_error_batch,
    decode_request_batch,
)
from receiver.handlers import IngestHandler
from sounding import metrics
from sounding.timeutil import now_us


class ErrorHandler(IngestHandler):
    endpoint = "errors"

    async def ingest(self, body: bytes) -> None:
        batch = self.new_batch(body)
        batch.errors.append(decode_error(self.json_body(body), now_us(), self.trace_link()))
        await self.ctx.pipeline.consume(batch)


class ErrorBatchHandler(IngestHandler):
    endpoint = "errors_batch"

    async def ingest(self, body: bytes) -> None:
        errors, rejected = decode_error_batch(self.json_body(body), now_us(), self.trace_link())
        batch = self.new_batch(body)
        batch.errors.extend(errors)
        await self.ctx.pipeline.consume(batch)
        self._partial(len(errors), rejected, "errors")

    def _partial(self, accepted: int, rejected: list[dict[str, Any]], signal: str) -> None:
        if rejected:
            metrics.DROPPED.labels(signal, "invalid").inc(len(rejected))
        self.set_status(202)
        self.write({"accepted": accepted, "rejected": len(rejected), "rejected_items": rejected})


class DeployHandler(IngestHandler):
    endpoint = "deploys"

    async def ingest(self, body: bytes) -> None:
        batch = self.new_batch(body)
        batch.deploys.append(decode_deploy(self.json_body(body), now_us()))
        await self.ctx.pipeline.consume(batch)


class RequestsHandler(ErrorBatchHandler):
    endpoint = "requests"

    async def ingest(self, body: bytes) -> None:
        requests, rejected = decode_request_batch(self.json_body(body), now_us(),
                                                  self.trace_link())
        batch = self.new_batch(body)
        batch.requests.extend(requests)
        await self.ctx.pipeline.consume(batch)
        self._partial(len(requests), rejected, "requests")
