"""The auth extension: seeds auth.api_keys, makes the first-run key on a database
without any, and answers the Authenticator contract receivers ask."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from extensions.auth import AuthExtension
from extensions.storage import StorageExtension
from model.component import Authenticator
from model.errors import ConfigError, Unauthenticated
from runtime.factory import DetachedHost, build


def _auth(tmp_path: Path, api_keys: str) -> tuple[AuthExtension, StorageExtension]:
    storage = StorageExtension("storage", {"url": f"sqlite:///{tmp_path / 'db.sqlite'}",
                                           "sqlite_synchronous": "NORMAL",
                                           "sqlite_wal_max_bytes": 0})
    auth = build("extension", "auth", {"api_keys": api_keys}, DetachedHost({"storage": storage}),
                 "auth")
    assert isinstance(auth, AuthExtension) and isinstance(auth, Authenticator)
    return auth, storage


def test_seeded_keys_answer_and_others_are_refused(tmp_path: Path) -> None:
    auth, storage = _auth(tmp_path, "shop:key-shop-1,billing:key-billing-1")

    async def run() -> tuple[int, int]:
        await storage.start()
        await auth.start()
        try:
            shop = await auth.project_for_key("key-shop-1")
            billing = await auth.project_for_key("key-billing-1")
            with pytest.raises(Unauthenticated):
                await auth.project_for_key("key-nobody")
            return shop, billing
        finally:
            await auth.shutdown()
            await storage.shutdown()

    shop, billing = asyncio.run(run())
    assert shop != billing
    assert auth.first_run_key is None  # keys were given: no default project


def test_a_database_without_keys_gets_a_first_run_key(tmp_path: Path) -> None:
    auth, storage = _auth(tmp_path, "")

    async def run() -> int:
        await storage.start()
        await auth.start()
        assert auth.first_run_key is not None
        try:
            return await auth.project_for_key(auth.first_run_key)
        finally:
            await auth.shutdown()
            await storage.shutdown()

    assert asyncio.run(run()) > 0


def test_malformed_api_keys_stop_the_start(tmp_path: Path) -> None:
    auth, storage = _auth(tmp_path, "no-colon")

    async def run() -> None:
        await storage.start()
        try:
            with pytest.raises(ConfigError, match="project:key pairs"):
                await auth.start()
        finally:
            await storage.shutdown()

    asyncio.run(run())
