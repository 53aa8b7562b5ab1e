"""The pipeline: processors in order, then every exporter."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

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
        if len(self.exporters) == 1:
            await self.exporters[0].export(batch)
        else:
            await asyncio.gather(*(exporter.export(batch) for exporter in self.exporters))

    async def consume_encoded(self, encoded: EncodedBatch) -> None:
        """Hand on a batch that a decode worker already processed and encoded."""
        if len(self.exporters) == 1:
            await self.exporters[0].export_encoded(encoded)
        else:
            await asyncio.gather(*(exporter.export_encoded(encoded)
                                   for exporter in self.exporters))

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
