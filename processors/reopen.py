"""Status reopening: a Resolved group that recurs becomes Open again.

This stage decides which groups are candidates (every group the batch touches,
with its latest occurrence); the exporter reopens, in the same transaction and
atomically, those that are Resolved with a resolution older than that occurrence,
and records the change. Ignored groups keep counting and stay Ignored. Without
this stage in the pipeline, nothing reopens.
"""

from __future__ import annotations

from sounding.component import Processor
from sounding.records import Batch


class ReopenProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def process(self, batch: Batch) -> Batch:
        for fingerprint, delta in batch.groups.items():
            batch.reopen_after[fingerprint] = max(
                delta.last_seen_us, batch.reopen_after.get(fingerprint, 0))
        return batch
