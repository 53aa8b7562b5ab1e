"""The storage extension: owns the Store that the SQL exporter, authentication and
the dashboard share. Started first (it applies the migrations), disposed last.
Configured by the top-level `storage:` section."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from extensions.sourcemaps import SourceMapCache
from model.component import Extension, Host
from model.errors import ConfigError
from model.sourcemap import LoadedMap
from runtime import group
from runtime.configcheck import require_int
from runtime.factory import Factory
from storage.partitions import ensure_partitions
from storage.store import Store

DEFAULTS: dict[str, Any] = {
    "url": "sqlite:///sounding.db",
    # SQLite only: NORMAL survives a crash of the process (kill -9); FULL also
    # survives a power cut, at the cost of an fsync per commit.
    "sqlite_synchronous": "NORMAL",
    # SQLite only: past this size the write-ahead log is emptied, holding the
    # writer for the end of that checkpoint (two fsyncs); 0 lets it grow. 256 MiB
    # keeps the file within a few hundred MB and, at 110 MB/s of log, holds the
    # writer at most once every two seconds or so.
    "sqlite_wal_max_bytes": 256 * 1024 * 1024,
    # Parsed source maps kept for symbolication (extensions/sourcemaps.py), in bytes
    # of the uploaded files they were parsed from.
    "source_map_cache_bytes": 64 * 1024 * 1024,
}
# A ping is cheap but not free; under a flood of health checks, reuse a recent one.
PING_TTL = 1.0


class StorageExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any] | None = None, *,
                 store: Store | None = None) -> None:
        super().__init__(name, config)
        self.store = store if store is not None else Store(
            self.config["url"], self.config["sqlite_synchronous"],
            self.config["sqlite_wal_max_bytes"])
        # The uploaded source maps, for symbolication (model.sourcemap.SourceMaps).
        self.source_maps = SourceMapCache(
            self.store, int(self.config.get("source_map_cache_bytes",
                                            DEFAULTS["source_map_cache_bytes"])))
        self._upgraded = False
        self._last_ping: tuple[float, bool] = (0.0, True)

    @classmethod
    def over(cls, store: Store) -> StorageExtension:
        """An extension over a store already migrated (tests, tools)."""
        extension = cls("storage", {}, store=store)
        extension._upgraded = True
        return extension

    def find(self, project_id: int, debug_id: str | None, release: str | None,
             dist: str | None, abs_path: str) -> tuple[LoadedMap | None, str]:
        """model.sourcemap.SourceMaps: the map of a frame (extensions/sourcemaps.py)."""
        return self.source_maps.find(project_id, debug_id, release, dist, abs_path)

    async def start(self) -> None:
        self.store.reopen()  # started again after a shutdown
        # A serve group's workers start after its leader migrated (runtime/group.py).
        if not self._upgraded and group.place().role != group.WORKER:
            await asyncio.to_thread(self._upgrade)
            self._upgraded = True
        self.source_maps.start_ahead()

    def _upgrade(self) -> None:
        self.store.upgrade()
        # On PostgreSQL, the day partitions of today and the next days, so that a
        # collector that was stopped for a while writes into days, not the default
        # partition (the retention sweep keeps them ahead from then on).
        with self.store.writer.begin() as conn:
            ensure_partitions(conn, time.time_ns())

    async def shutdown(self) -> None:
        await asyncio.to_thread(self.source_maps.stop_ahead)
        self.store.close()  # safe twice; a call left running in a thread fails at once

    async def health(self) -> tuple[bool, str]:
        now = time.monotonic()
        checked_at, ok = self._last_ping
        if now - checked_at > PING_TTL:
            ok = await asyncio.to_thread(self.store.ping)
            self._last_ping = (time.monotonic(), ok)
        return ok, "" if ok else "the database does not answer"


def _check(path: str, config: dict[str, Any]) -> None:
    if not isinstance(config.get("url"), str) or not config["url"]:
        raise ConfigError(f"{path}.url must be a database URL")
    if str(config.get("sqlite_synchronous")).upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ConfigError(f"{path}.sqlite_synchronous must be NORMAL, FULL or EXTRA")
    # Below a mebibyte the writer would be held several times a second for nothing.
    if config.get("sqlite_wal_max_bytes", 0) != 0:
        require_int(path, config, "sqlite_wal_max_bytes", 1024 * 1024)
    if "source_map_cache_bytes" in config:
        require_int(path, config, "source_map_cache_bytes", 1024 * 1024)


def _create(name: str, config: dict[str, Any], _host: Host) -> StorageExtension:
    return StorageExtension(name, config)


factory = Factory("storage", "extension", _create, DEFAULTS, _check)
