"""The authentication extension: ingest keys to projects, for every receiver.

Receivers parse `Authorization: Bearer <key>` (receiver/auth.py) and ask this
extension for the key's project; they never query the store. Configured by the
top-level `auth:` section; at start it seeds `auth.api_keys` and, on a database
without any key, creates the first-run key of project `default`.

Every active key's hash is held in memory, with its project, and the set is read
again from the database every half `cache_seconds`; so any lookup, a known key or
a flood of unknown ones, is one dict lookup and never a query. A key created or
revoked with the CLI, by this collector's database or by any other collector
sharing it, takes effect within `cache_seconds`. While the database cannot be
reached, the last set read keeps answering.

Only SHA-256 hashes of keys are kept, never a key. Keys are few; should there be
more than `MAX_KEYS`, those beyond are looked up one by one, with hits and misses
cached for `cache_seconds` in a bounded cache, as before the set existed.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from extensions import limits
from extensions.storage import StorageExtension
from model.component import MAX_KEY_LENGTH, Extension, Host
from model.errors import ConfigError, RateLimited, StoreUnavailable, Unauthenticated
from runtime.configcheck import require_str
from runtime.factory import Factory
from runtime.tasks import cancel_and_wait
from storage import keys
from storage.store import Store

log = logging.getLogger(__name__)

MAX_KEYS = 100_000  # hashes held in memory, about 20 MB at most
MAX_CACHED = 10_000  # per-key lookups cached, used only beyond MAX_KEYS

DEFAULTS: dict[str, Any] = {
    # Comma-separated project:key pairs, seeded at start (for sidecars and tests).
    "api_keys": "",
    # How long a key lookup is cached; also the longest a revoked key still works.
    "cache_seconds": 10,
    # Rate limits and quotas per project (extensions/limits.py, docs/limits.md).
    "limits": copy.deepcopy(limits.DEFAULTS),
}


class KeyAuthenticator:
    """The key set in memory, kept fresh; the lookup behind the extension."""

    def __init__(self, store: Store, cache_seconds: float = 10.0) -> None:
        self.store = store
        self.cache_seconds = cache_seconds
        self._keys: dict[str, int] = {}  # key hash: project id, every active key
        self._complete = False  # _keys holds every active key (there are few enough)
        self._loaded: asyncio.Future[None] | None = None
        self._refresher: asyncio.Task[None] | None = None
        self._cache: dict[str, tuple[int | None, float]] = {}
        # Lookups under way: concurrent requests with one uncached key share one query
        # instead of sending the database a burst of identical ones.
        self._pending: dict[str, asyncio.Future[int | None]] = {}

    async def start(self) -> None:
        """Read the keys, then keep them fresh. With `cache_seconds` 0 every request
        asks the database, and a revoked key stops working at once."""
        if self.cache_seconds <= 0 or self._refresher is not None:
            return
        await self._load_once()
        self._refresher = asyncio.get_running_loop().create_task(self._refresh_forever())

    async def shutdown(self) -> None:
        refresher, self._refresher = self._refresher, None
        if refresher is not None:
            await cancel_and_wait([refresher])

    async def project_for_key(self, key: str) -> int:
        if len(key) > MAX_KEY_LENGTH:
            raise Unauthenticated("unknown or revoked API key")
        key_hash = keys.hash_key(key)
        if self.cache_seconds > 0 and not self._complete:
            await self._load_once()  # not started (a test), or more keys than MAX_KEYS
        project_id = self._keys.get(key_hash)
        if project_id is None and not self._complete:
            project_id = await self._cached_lookup(key_hash)
        if project_id is None:
            raise Unauthenticated("unknown or revoked API key")
        return project_id

    # The key set.

    async def _load_once(self) -> None:
        if self._loaded is None:
            self._loaded = asyncio.get_running_loop().create_future()
            try:
                await self._refresh()
            finally:
                self._loaded.set_result(None)
        await asyncio.shield(self._loaded)

    async def _refresh_forever(self) -> None:
        while True:
            await asyncio.sleep(self.cache_seconds / 2)
            await self._refresh()

    async def _refresh(self) -> None:
        try:
            active = await asyncio.to_thread(keys.active_keys, self.store, MAX_KEYS + 1)
        except Exception as exc:  # noqa: BLE001 - the database is away; keep the last set
            log.error("cannot read the ingest keys; answering from the last set read: %s",
                      type(exc).__name__)
            return
        self._complete = len(active) <= MAX_KEYS
        if not self._complete:
            log.error("more than %d active ingest keys: those beyond are looked up one by one",
                      MAX_KEYS)
        self._keys = active
        self._cache.clear()

    # One key at a time: without the set (cache_seconds 0) or beyond MAX_KEYS.

    async def _cached_lookup(self, key_hash: str) -> int | None:
        now = time.monotonic()
        cached = self._cache.get(key_hash)
        if cached is not None and cached[1] > now:
            return cached[0]
        return await self._lookup(key_hash, now)

    async def _lookup(self, key_hash: str, now: float) -> int | None:
        pending = self._pending.get(key_hash)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self._pending[key_hash] = future
        try:
            project_id = await asyncio.to_thread(keys.project_for_hash, self.store, key_hash)
        except SQLAlchemyError as exc:
            error = StoreUnavailable("the store cannot be reached to check the key")
            future.set_exception(error)
            future.exception()  # retrieved here, so an unawaited one is not reported
            raise error from exc
        else:
            future.set_result(project_id)
            if self.cache_seconds > 0:
                if len(self._cache) >= MAX_CACHED:
                    self._cache.clear()
                self._cache[key_hash] = (project_id, now + self.cache_seconds)
            return project_id
        finally:
            del self._pending[key_hash]
            if not future.done():  # this request was cancelled: do not strand the others
                future.set_exception(StoreUnavailable("the key check was interrupted"))
                future.exception()


def seed_keys(store: Store, spec: str) -> list[str]:
    """Register auth.api_keys (`project:key,project:key`); returns the projects seeded."""
    seeded = []
    with store.writer.begin() as conn:
        for pair in (p.strip() for p in spec.split(",")):
            if not pair:
                continue
            project, sep, key = pair.partition(":")
            if not sep or not project.strip() or not key.strip():
                raise ConfigError("auth.api_keys (SOUNDING_API_KEYS) takes comma-separated "
                                  "project:key pairs")
            if len(key.strip()) > MAX_KEY_LENGTH:
                raise ConfigError(f"auth.api_keys: a key longer than {MAX_KEY_LENGTH} "
                                  "characters would never be accepted")
            try:
                keys.add_key(conn, project.strip(), key.strip())
            except ValueError as exc:
                raise ConfigError(f"auth.api_keys: {exc}") from exc
            seeded.append(project.strip())
    return seeded


class AuthExtension(Extension):
    """Seeds keys, creates the first-run key, then answers `project_for_key`
    (the model.component.Authenticator contract) and, for the project, whether it
    may send (model.component.Limiter: extensions/limits.py)."""

    def __init__(self, name: str, config: dict[str, Any], *, store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        self.keys = KeyAuthenticator(store, float(self.config["cache_seconds"]))
        # Created at start on a database without any key; printed once by the CLI.
        self.first_run_key: str | None = None
        self.first_run_project_id: int | None = None  # for the first-run DSN
        self.limits = limits.ProjectLimits(store, self.config.get("limits") or {})

    async def start(self) -> None:
        api_keys = str(self.config.get("api_keys") or "")
        await asyncio.to_thread(seed_keys, self.store, api_keys)
        if not api_keys and await asyncio.to_thread(keys.active_key_count, self.store) == 0:
            self.first_run_key, _ = await asyncio.to_thread(keys.create_key, self.store,
                                                            "default")
            self.first_run_project_id = await asyncio.to_thread(keys.project_id_of,
                                                                self.store, "default")
        await self.keys.start()  # the keys, read once the seeded and first-run ones exist
        await self.limits.start()

    async def shutdown(self) -> None:
        await self.limits.shutdown()
        await self.keys.shutdown()

    async def project_for_key(self, key: str) -> int:
        return await self.keys.project_for_key(key)

    def closed(self, project_id: int, categories: tuple[str, ...]) -> RateLimited | None:
        return self.limits.closed(project_id, categories)

    async def take(self, project_id: int, counts: Mapping[str, int]) -> None:
        await self.limits.take(project_id, counts)

    def release(self, project_id: int, categories: tuple[str, ...]) -> None:
        self.limits.limiter.release(project_id, categories)


def _check(path: str, config: dict[str, Any]) -> None:
    require_str(path, config, "api_keys")
    seconds = config.get("cache_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        raise ConfigError(f"{path}.cache_seconds must be a number >= 0, got {seconds!r}")
    limits.check(f"{path}.limits", config.get("limits"))


def _create(name: str, config: dict[str, Any], host: Host) -> AuthExtension:
    return AuthExtension(name, config,
                         store=host.extension("storage", StorageExtension).store)


factory = Factory("auth", "extension", _create, DEFAULTS, _check)
