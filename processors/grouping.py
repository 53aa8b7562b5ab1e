"""Fingerprint grouping: decide which group each error joins, then fold the batch's
errors into one delta per group.

Every door's errors are grouped here, by model/fingerprint.py's one rule: from what
the door read (`ErrorEvent.grouping`: a Sentry event's frames and `fingerprint` parts,
an OpenTelemetry exception's type, message and stack trace), or the fingerprint the
sender chose when the door took it as sent (the custom door's).

JavaScript frames are first mapped to their original sources by the uploaded source
maps (processors/symbolicate.py), when the host has them (the storage extension;
not in a decode worker, which has no store): the rule then reads the original frame,
so two builds of one bug are one group. Here rather than in a stage of its own, so
that no pipeline can group before it maps.

The deltas are model/groupcounts.py's; the exporter applies each as one atomic
upsert, so a batch of 100 errors over 3 fingerprints costs 3 group writes, and
concurrent writers stay exact.
"""

from __future__ import annotations

from typing import Any

from model.component import Host, Processor
from model.errors import ConfigError
from model.fingerprint import decide
from model.groupcounts import count_errors
from model.records import Batch
from model.sourcemap import SourceMaps
from processors.symbolicate import symbolicate


class GroupingProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def __init__(self, name: str, config: dict[str, Any] | None = None,
                 source_maps: SourceMaps | None = None) -> None:
        super().__init__(name, config)
        self.source_maps = source_maps

    @classmethod
    def from_host(cls, name: str, config: dict[str, Any], host: Host) -> GroupingProcessor:
        try:
            maps: SourceMaps | None = host.source_maps()
        except ConfigError:
            maps = None  # no store here (a decode worker): frames stay as sent
        return cls(name, config, maps)

    def process(self, batch: Batch) -> Batch:
        maps = self.source_maps
        for error in batch.errors:
            if maps is not None and (error.exceptions or error.release is not None):
                symbolicate(batch.project_id, error, maps)
            if error.grouping is not None:
                error.fingerprint = decide(error.grouping, error.backtrace)
                error.grouping = None  # decided: an exporter reads `fingerprint`
        count_errors(((e.fingerprint, e.ts_us, e.exception_class, e.message)
                      for e in batch.errors), batch.groups)
        return batch
