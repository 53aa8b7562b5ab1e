"""The pipeline: processors in order, then every exporter.

A batch arrives in one of two ways. `consume`: decoded on the event loop, it runs
through the processors here and every exporter's `export`. `consume_prepared`: a
decode worker (runtime/offload.py) already ran the processors and each
exporter's declared preparation (`Exporter.preparation`); the pipeline hands each
exporter its own item without looking inside it.

Either way, before anything is processed or exported, the batch passes the project's
limits (`admit`: the Limiter of model/component.py, one token per record of each
category of model/limits.py and per byte), and once every exporter committed it,
its records are counted as accepted (runtime/usage.py); refused, as rate limited or
over quota. One gate for every door, so a new door is limited without a line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from model import limits as lim
from model.component import Exporter, Limiter, PolicySource, Processor
from model.errors import RateLimited, RetryableError
from model.records import Batch
from runtime import drops, usage
from runtime.admission import Admission
from runtime.offload import DecodePool


def retry_after(exporters: Sequence[Exporter]) -> int:
    """Seconds to suggest in Retry-After when the collector refuses a request before
    any exporter saw it (admission, decode workers): the longest its exporters ask."""
    return max((exporter.retry_after for exporter in exporters), default=1)


def counts_of(batch: Batch) -> dict[str, int]:
    """A batch's records per limit category (model/limits.py)."""
    counts: dict[str, int] = {}
    for name, category in lim.BATCH_FIELDS.items():
        n = len(getattr(batch, name))
        if n:
            counts[category] = counts.get(category, 0) + n
    return counts


class Pipeline:
    def __init__(self, processors: Sequence[Processor], exporters: Sequence[Exporter],
                 decode_pool: DecodePool | None = None,
                 admission: Admission | None = None,
                 limiter: Limiter | None = None,
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
        # The projects' rate limits and quotas (the auth extension's); None: unlimited.
        self.limiter = limiter

    async def consume(self, batch: Batch, extra: Mapping[str, int] | None = None) -> None:
        """Run the batch through every stage; returns once every exporter committed it.
        `extra`: records a door accepts without putting them in the batch (Sentry
        sessions), by category, limited and counted with it."""
        batch = self.with_policy(batch)
        counts = counts_of(batch)
        if extra:
            counts.update(extra)
        await self.admit(batch.project_id, counts, batch.approx_bytes)
        for processor in self.processors:
            batch = processor.process(batch)
        if batch.filtered:
            drops.count_filtered(batch.project_id, batch.filtered)
            counts = lim.unfiltered(counts, batch.filtered)
        await self._export([exporter.export(batch) for exporter in self.exporters])
        self.accepted(batch.project_id, counts)

    def with_policy(self, batch: Batch) -> Batch:
        """`batch` with its project's policy, which travels with it into a decode worker
        (the doors hand DecodePool.submit a batch from here)."""
        if batch.policy is None and self.policies is not None:
            batch.policy = self.policies.policy_for(batch.project_id)
        return batch

    async def consume_prepared(self, results: Sequence[Any], project_id: int | None = None,
                               counts: Mapping[str, int] | None = None, size: int = 0
                               ) -> None:
        """Hand on what a decode worker made of one request: one item per exporter, in
        the pipeline's order (runtime/offload.py builds the list). `counts`: its records
        per category, for the project's limits and usage."""
        if project_id is not None and counts is not None:
            await self.admit(project_id, counts, size)
        await self._export([
            exporter.export_prepared(item) if prepared else exporter.export(item)
            for exporter, prepared, item in zip(self.exporters, self._prepared, results,
                                                strict=True)])
        if project_id is not None and counts is not None:
            self.accepted(project_id, counts)

    async def admit(self, project_id: int, counts: Mapping[str, int], size: int = 0) -> None:
        """Take the records (and `size` bytes) from the project's limits, or raise
        RateLimited; the refused records are counted in its usage."""
        if self.limiter is None:
            return
        taking = {**counts, lim.BYTES: size} if size else counts
        try:
            await self.limiter.take(project_id, taking)
        except RateLimited as exc:
            for category, n in counts.items():
                usage.count(project_id, category, exc.outcome, n)
            raise

    @staticmethod
    def accepted(project_id: int, counts: Mapping[str, int]) -> None:
        for category, n in counts.items():
            usage.count(project_id, category, lim.ACCEPTED, n)

    def closed(self, project_id: int, categories: tuple[str, ...]) -> RateLimited | None:
        """Before a request's body: whether the project's limits already refuse every
        category the door can carry (from memory). The refused request is counted."""
        if self.limiter is None:
            return None
        refusal = self.limiter.closed(project_id, categories)
        if refusal is not None:
            usage.count(project_id, refusal.categories[0], refusal.outcome, 0, requests=1)
        return refusal

    def release(self, project_id: int, categories: tuple[str, ...]) -> None:
        """The request `closed` let in is done: call once, whatever became of it."""
        if self.limiter is not None:
            self.limiter.release(project_id, categories)

    @staticmethod
    async def _export(exports: list[Coroutine[Any, Any, None]]) -> None:
        # One exporter (the usual case) is awaited directly: gather costs a task each.
        if len(exports) == 1:
            await exports[0]
        else:
            await asyncio.gather(*exports)

    def admission_error(self, project_id: int | None = None,
                        categories: tuple[str, ...] = ()) -> RetryableError | None:
        """Why a new request (of `project_id`, when known: runtime/admission.py sheds
        the projects above their fair share first) would be refused now (the collector
        is busy, or the first exporter's reason), or None. A project's shed request is
        counted in its usage, under its door's first category."""
        refusal = self.admission.refusal(project_id)
        if refusal is not None:
            if project_id is not None:
                usage.count(project_id, categories[0] if categories else lim.BYTES, lim.SHED,
                            0, requests=1)
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
