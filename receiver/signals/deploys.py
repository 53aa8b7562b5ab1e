"""Deploys (POST /ingest/deploys, DeployService.Record): one record per document."""

from __future__ import annotations

from typing import Any

from receiver.decode_custom import decode_deploy
from receiver.signals.outcome import ACCEPTED, Origin, Outcome
from sounding.pipeline import Pipeline
from sounding.timeutil import now_us


async def handle_deploy(pipeline: Pipeline, origin: Origin, document: Any) -> Outcome:
    batch = origin.new_batch()
    batch.deploys.append(decode_deploy(document, now_us()))
    await pipeline.consume(batch)
    return ACCEPTED
