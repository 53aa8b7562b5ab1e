"""Fingerprint grouping: decide which group each error joins, then fold the batch's
errors into one delta per group.

Every door's errors are grouped here, by model/fingerprint.py's one rule: from what
the door read (`ErrorEvent.grouping`: a Sentry event's frames and `fingerprint` parts,
an OpenTelemetry exception's type, message and stack trace), or the fingerprint the
sender chose when the door took it as sent (the custom door's).

The deltas are model/groupcounts.py's; the exporter applies each as one atomic
upsert, so a batch of 100 errors over 3 fingerprints costs 3 group writes, and
concurrent writers stay exact.
"""

from __future__ import annotations

from model.component import Processor
from model.fingerprint import decide
from model.groupcounts import count_errors
from model.records import Batch


class GroupingProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def process(self, batch: Batch) -> Batch:
        for error in batch.errors:
            if error.grouping is not None:
                error.fingerprint = decide(error.grouping, error.backtrace)
                error.grouping = None  # decided: an exporter reads `fingerprint`
        count_errors(((e.fingerprint, e.ts_us, e.exception_class, e.message)
                      for e in batch.errors), batch.groups)
        return batch
