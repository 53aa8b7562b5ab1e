"""Plugin exporters, as a third party would ship one: they write what they receive
to a file, one JSON line per batch, so that a test can check every record arrived.

`collect` declares no preparation: batches a decode worker handled reach its
`export` as processed batches. `collect_prepared` declares one: a decode worker
summarises the batch (`summary`) and the summary reaches `export_prepared`.
"""

from __future__ import annotations

import json
import os
from typing import IO, Any

from model.component import Exporter, Preparation
from model.errors import ConfigError
from model.records import Batch


def summary(batch: Batch, settings: dict[str, Any]) -> dict[str, Any]:
    """What a line says about one batch: its records by id, and the process that
    looked at it (a decode worker's, for a prepared batch)."""
    return {
        "pid": os.getpid(),
        "project_id": batch.project_id,
        "counts": {"spans": len(batch.spans), "errors": len(batch.errors),
                   "deploys": len(batch.deploys), "requests": len(batch.requests)},
        "spans": [f"{span.trace_id}:{span.span_id}" for span in batch.spans],
        "errors": [error.request_id for error in batch.errors],
        "deploys": [deploy.git_sha for deploy in batch.deploys],
        "requests": [request.request_id for request in batch.requests],
        **settings,
    }


class CollectExporter(Exporter):
    """Appends one JSON line per batch to `path`."""

    # Declared, so the factory refuses unknown keys in this exporter's section.
    default_config: dict[str, Any] = {"path": None}
    # The defaults name no file: a lifecycle test builds it with this one.
    sample_config: dict[str, Any] = {"path": "collected.jsonl"}

    def __init__(self, name: str, config: dict[str, Any] | None = None) -> None:
        super().__init__(name, config)
        self.path = str(self.config["path"])
        self._file: IO[str] | None = None

    @classmethod
    def validate_config(cls, path: str, config: dict[str, Any]) -> None:
        if not isinstance(config.get("path"), str) or not config["path"]:
            raise ConfigError(f"{path}.path must name the file to write batches to")

    async def start(self) -> None:
        if self._file is None:
            # Opened here and closed in shutdown: the lifecycle test checks both.
            self._file = open(self.path, "a", encoding="utf-8")

    async def shutdown(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()

    async def export(self, batch: Batch) -> None:
        self._write({**summary(batch, {}), "via": "export"})

    def _write(self, line: dict[str, Any]) -> None:
        if self._file is None:
            raise RuntimeError(f"exporter {self.name} is not started")
        # Flushed before returning: the client's 202 depends on it.
        self._file.write(json.dumps({"exporter": self.name, **line}) + "\n")
        self._file.flush()


class PreparingCollectExporter(CollectExporter):
    """Like `collect`, but large requests are summarised in a decode worker."""

    def preparation(self) -> Preparation:
        return summary, {"prepared_for": self.name}

    async def export_prepared(self, prepared: Any) -> None:
        self._write({**prepared, "via": "export_prepared"})
