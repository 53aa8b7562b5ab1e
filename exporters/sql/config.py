"""The SQL exporter's configuration (`exporters.sql`): its defaults and checks, read
by its factory (exporters/sql/exporter.py)."""

from __future__ import annotations

from typing import Any

from model.errors import ConfigError
from runtime.configcheck import require_int

DEFAULTS: dict[str, Any] = {
    # Bounds of what is handed to the writer and not yet committed; past them
    # ingest answers 503. They bound memory: a queued span costs about 3 KiB.
    "queue_max_records": 12_288,
    "queue_max_bytes": 32 * 1024 * 1024,
    # The most records one group commit writes in one transaction.
    "max_commit_records": 4_096,
    "retry_after_seconds": 1,
    # SQLite only: the writer's page cache; a warm cache keeps index inserts cheap.
    "sqlite_cache_kib": 8 * 1024,
    # A trace is complete, and its performance detectors run, once no span of it has
    # come for this long (storage/writer/detect.py).
    "trace_wait_s": 10,
}


def check(path: str, config: dict[str, Any]) -> None:
    for key in ("queue_max_records", "queue_max_bytes", "max_commit_records",
                "sqlite_cache_kib"):
        require_int(path, config, key, 1)
    require_int(path, config, "retry_after_seconds", 0)
    wait = config.get("trace_wait_s")
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 < wait <= 3600:
        raise ConfigError(f"{path}.trace_wait_s must be a number of seconds in (0, 3600], "
                          f"got {wait!r}")
