"""A real pipeline whose one exporter keeps what it is given, for the signal tests:
a component written to the Exporter contract, as a plugin would be."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from model.component import Exporter
from model.records import Batch
from receiver.signals.outcome import Origin, Outcome
from runtime.pipeline import Pipeline

TRACE_ID, SPAN_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


class Keep(Exporter):
    def __init__(self) -> None:
        super().__init__("keep")
        self.batches: list[Batch] = []

    async def export(self, batch: Batch) -> None:
        self.batches.append(batch)


def run(handle: Callable[[Pipeline, Origin, Any], Coroutine[Any, Any, Outcome]], document: Any,
        origin: Origin | None = None) -> tuple[Outcome, list[Batch]]:
    """The handler's outcome, and the batches the pipeline handed on."""
    keep = Keep()
    pipeline = Pipeline([], [keep])
    outcome = asyncio.run(handle(pipeline, origin or Origin(7, 123, (TRACE_ID, SPAN_ID)),
                                 document))
    return outcome, keep.batches
