"""Fingerprint grouping: fold a batch's errors into one delta per fingerprint.

The exporter applies each delta as one atomic upsert, so a batch of 100 errors
over 3 fingerprints costs 3 group writes, and concurrent writers stay exact.
"""

from __future__ import annotations

from sounding.component import Processor
from sounding.records import Batch, GroupDelta


def hour_of(ts_us: int) -> int:
    return ts_us // 3_600_000_000 * 3600


class GroupingProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def process(self, batch: Batch) -> Batch:
        groups = batch.groups
        for error in batch.errors:
            hour = hour_of(error.ts_us)
            delta = groups.get(error.fingerprint)
            if delta is None:
                groups[error.fingerprint] = GroupDelta(
                    fingerprint=error.fingerprint,
                    exception_class=error.exception_class,
                    message=error.message,
                    count=1,
                    first_seen_us=error.ts_us,
                    last_seen_us=error.ts_us,
                    hourly={hour: 1},
                )
                continue
            delta.count += 1
            delta.first_seen_us = min(delta.first_seen_us, error.ts_us)
            if error.ts_us >= delta.last_seen_us:
                # The group shows its latest occurrence's class and message.
                delta.last_seen_us = error.ts_us
                delta.exception_class, delta.message = error.exception_class, error.message
            delta.hourly[hour] = delta.hourly.get(hour, 0) + 1
        return batch
