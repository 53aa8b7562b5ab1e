"""Reopening: name, for every group the batch touches, the occurrence that may
reopen it (its latest: the `last_seen_us` of its delta, model/groupcounts.py).

The rule it stands for: a Resolved group reopens when an occurrence is later than
its resolution, so a late event (sent after the resolution, but timed before it)
reopens nothing; a group resolved "in the next release" reopens only on an error of a
release it had not seen by then. Ignored groups keep counting and stay Ignored. The
writer applies the rule to what it stored (an occurrence it did not keep names
nothing: storage/writer/group_deltas.py), atomically in the commit that stores the errors,
since only the database knows each group's status (storage/writer/groups.py). A
pipeline that stores errors must run this stage (sounding/config.py).
"""

from __future__ import annotations

from model.component import Processor
from model.records import Batch


class ReopenProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def process(self, batch: Batch) -> Batch:
        for fingerprint, delta in batch.groups.items():
            batch.reopen_after[fingerprint] = max(
                delta.last_seen_us, batch.reopen_after.get(fingerprint, 0))
        return batch
