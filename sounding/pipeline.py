"""The pipeline: processors in order, then every exporter."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any

from sounding.component import Exporter, Processor
from sounding.errors import RetryableError
from sounding.offload import DecodePool
from sounding.records import Batch
from storage.wire import EncodedBatch


class Pipeline:
    def __init__(self, processors: Sequence[Processor], exporters: Sequence[Exporter],
                 decode_pool: DecodePool | None = None) -> None:
        self.processors = list(processors)
        self.exporters = list(exporters)
        # Decode workers running copies of the same processors (sounding/offload.py).
        self.decode_pool = decode_pool

    async def consume(self, batch: Batch) -> None:
        """Run the batch through every stage; returns once every exporter committed it."""
        for processor in self.processors:
            batch = processor.process(batch)
        await self._export([exporter.export(batch) for exporter in self.exporters])

    async def consume_encoded(self, encoded: EncodedBatch) -> None:
        """Hand on a batch that a decode worker already processed and encoded."""
        await self._export([exporter.export_encoded(encoded) for exporter in self.exporters])

    @staticmethod
    async def _export(exports: list[Coroutine[Any, Any, None]]) -> None:
        # One exporter (the usual case) is awaited directly: gather costs a task each.
        if len(exports) == 1:
            await exports[0]
        else:
            await asyncio.gather(*exports)

    def admission_error(self) -> RetryableError | None:
        """The first exporter's reason to refuse a batch now, or None."""
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

    async def shutdown(self) -> None:
        for processor in reversed(self.processors):
            await processor.shutdown()
        if self.decode_pool is not None:
            await self.decode_pool.shutdown()
        for exporter in reversed(self.exporters):
            await exporter.shutdown()
