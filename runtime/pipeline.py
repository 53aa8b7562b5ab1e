"""The pipeline: processors in order, then every exporter.

A batch arrives in one of two ways. `consume`: decoded on the event loop, it runs
through the processors here and every exporter's `export`. `consume_prepared`: a
decode worker (runtime/offload.py) already ran the processors and each
exporter's declared preparation (`Exporter.preparation`); the pipeline hands each
exporter its own item without looking inside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any

from model.component import Exporter, PolicySource, Processor
from model.errors import RetryableError
from model.records import Batch
from runtime import drops
from runtime.admission import Admission
from runtime.offload import DecodePool


def retry_after(exporters: Sequence[Exporter]) -> int:
    """Seconds to suggest in Retry-After when the collector refuses a request before
    any exporter saw it (admission, decode workers): the longest its exporters ask."""
    return max((exporter.retry_after for exporter in exporters), default=1)


class Pipeline:
    def __init__(self, processors: Sequence[Processor], exporters: Sequence[Exporter],
                 decode_pool: DecodePool | None = None,
                 admission: Admission | None = None,
                 policies: PolicySource | None = None) -> None:
        self.processors = list(processors)
        # Each project's policy (scrubbing, inbound filters: model/policy.py), put on
        # every batch before any stage runs; None: the stages' defaults.
        self.policies = policies
        self.exporters = list(exporters)
        # Decode workers running copies of the same processors (runtime/offload.py).
        self.decode_pool = decode_pool
        # Requests in flight and the event loop's lag (runtime/admission.py).
        self.admission = admission or Admission(max_in_flight=1 << 30, max_lag_ms=0)
        # Which exporters a decode worker prepares for (asked once, here): those get
        # their prepared item, the others the processed batch.
        self._prepared = [exporter.preparation() is not None for exporter in self.exporters]

    async def consume(self, batch: Batch) -> None:
        """Run the batch through every stage; returns once every exporter committed it."""
        batch = self.with_policy(batch)
        for processor in self.processors:
            batch = processor.process(batch)
        if batch.filtered:
            drops.count_filtered(batch.project_id, batch.filtered)
        await self._export([exporter.export(batch) for exporter in self.exporters])

    def with_policy(self, batch: Batch) -> Batch:
        """`batch` with its project's policy, which travels with it into a decode worker
        (the doors hand DecodePool.submit a batch from here)."""
        if batch.policy is None and self.policies is not None:
            batch.policy = self.policies.policy_for(batch.project_id)
        return batch

    async def consume_prepared(self, results: Sequence[Any]) -> None:
        """Hand on what a decode worker made of one request: one item per exporter, in
        the pipeline's order (runtime/offload.py builds the list)."""
        await self._export([
            exporter.export_prepared(item) if prepared else exporter.export(item)
            for exporter, prepared, item in zip(self.exporters, self._prepared, results,
                                                strict=True)])

    @staticmethod
    async def _export(exports: list[Coroutine[Any, Any, None]]) -> None:
        # One exporter (the usual case) is awaited directly: gather costs a task each.
        if len(exports) == 1:
            await exports[0]
        else:
            await asyncio.gather(*exports)

    def admission_error(self) -> RetryableError | None:
        """Why a new request would be refused now (the collector is busy, or the first
        exporter's reason), or None."""
        refusal = self.admission.refusal()
        if refusal is not None:
            return refusal
        for exporter in self.exporters:
            refusal = exporter.admission_error()
            if refusal is not None:
                return refusal
        return None

    async def start(self) -> None:
        # Downstream first, so every stage drains into a live next stage.
        for exporter in self.exporters:
            await exporter.start()
        if self.decode_pool is not None:
            await self.decode_pool.start()
        for processor in self.processors:
            await processor.start()
        await self.admission.start()

    async def shutdown(self) -> None:
        await self.admission.shutdown()
        for processor in reversed(self.processors):
            await processor.shutdown()
        if self.decode_pool is not None:
            await self.decode_pool.shutdown()
        for exporter in reversed(self.exporters):
            await exporter.shutdown()
