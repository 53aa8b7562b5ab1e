"""Ingest keys: `Authorization: Bearer <key>` picks the project.

Lookups are cached for `cache_seconds` (both hits and misses) so that ingest does
not query the database per request; that is also the longest a revoked key keeps
working on a running collector. The cache is bounded.
"""

from __future__ import annotations

import asyncio
import time

from sqlalchemy.exc import SQLAlchemyError

from sounding.errors import StoreUnavailable, Unauthenticated
from storage import keys
from storage.store import Store

MAX_CACHED = 10_000


def bearer_key(header: str | None) -> str:
    if not header:
        raise Unauthenticated("missing Authorization header; send 'Authorization: Bearer <key>'")
    scheme, _, key = header.strip().partition(" ")
    key = key.strip()
    if scheme.lower() != "bearer" or not key or " " in key:
        raise Unauthenticated("malformed Authorization header; send 'Authorization: Bearer <key>'")
    return key


class Authenticator:
    def __init__(self, store: Store, cache_seconds: float = 10.0) -> None:
        self.store = store
        self.cache_seconds = cache_seconds
        self._cache: dict[str, tuple[int | None, float]] = {}
        # Lookups under way: concurrent requests with one uncached key share one query
        # instead of sending the database a burst of identical ones (as at start-up).
        self._pending: dict[str, asyncio.Future[int | None]] = {}

    async def project_for(self, header: str | None) -> int:
        key_hash = keys.hash_key(bearer_key(header))
        now = time.monotonic()
        cached = self._cache.get(key_hash)
        if cached is not None and cached[1] > now:
            project_id = cached[0]
        else:
            project_id = await self._lookup(key_hash, now)
        if project_id is None:
            raise Unauthenticated("unknown or revoked API key")
        return project_id

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
            if len(self._cache) >= MAX_CACHED:
                self._cache.clear()
            self._cache[key_hash] = (project_id, now + self.cache_seconds)
            return project_id
        finally:
            del self._pending[key_hash]
            if not future.done():  # this request was cancelled: do not strand the others
                future.set_exception(StoreUnavailable("the key check was interrupted"))
                future.exception()
