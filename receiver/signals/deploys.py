"""Deploys (POST /ingest/deploys, DeployService.Record): one record per document."""

from __future__ import annotations

from typing import Any

from model.timeutil import now_us
from receiver.custom.decode import decode_deploy
from receiver.signals.outcome import ACCEPTED, Origin, Outcome
from runtime.pipeline import Pipeline


async def handle_deploy(pipeline: Pipeline, origin: Origin, document: Any) -> Outcome:
    batch = origin.new_batch()
    batch.deploys.append(decode_deploy(document, now_us()))
    await pipeline.consume(batch)
    return ACCEPTED
