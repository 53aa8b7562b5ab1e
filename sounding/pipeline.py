"""The pipeline: processors in order, then every exporter."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from sounding.component import Exporter, Processor
from sounding.errors import RetryableError
from sounding.records import Batch


class Pipeline:
    def __init__(self, processors: Sequence[Processor], exporters: Sequence[Exporter]) -> None:
        self.processors = list(processors)
        self.exporters = list(exporters)

    async def consume(self, batch: Batch) -> None:
        """Run the batch through every stage; returns once every exporter committed it."""
        for processor in self.processors:
            batch = processor.process(batch)
        if len(self.exporters) == 1:
            await self.exporters[0].export(batch)
        else:
            await asyncio.gather(*(exporter.export(batch) for exporter in self.exporters))

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
        for processor in self.processors:
            await processor.start()

    async def shutdown(self) -> None:
        for processor in reversed(self.processors):
            await processor.shutdown()
        for exporter in reversed(self.exporters):
            await exporter.shutdown()
