"""Store.close() (storage/store.py), on SQLite and PostgreSQL: after the collector's
storage has shut down, a call still running in a thread (a cancelled task's) cannot
open a connection and wait on a lock while the process exits; it is refused at once.
reopen() (the extension started again) makes the store usable again."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from extensions.storage import StorageExtension
from storage.store import Store, StoreClosed


def read_one(store: Store) -> int:
    with store.reader.connect() as conn:
        return int(conn.execute(text("SELECT 1")).scalar_one())


def test_a_closed_store_refuses_new_connections_and_reopens(db_url: str) -> None:
    store = Store(db_url)
    assert read_one(store) == 1
    store.close()
    for engine in (store.reader, store.writer):
        with pytest.raises(StoreClosed), engine.connect():
            pass
    assert store.ping() is False  # health says so rather than hang
    store.reopen()
    assert read_one(store) == 1
    store.dispose()
    assert read_one(store) == 1  # dispose alone only drops the pooled connections
    store.dispose()


def test_the_storage_extension_closes_its_store_and_a_restart_reopens_it(
        db_url: str) -> None:
    store = Store(db_url)
    store.upgrade()
    extension = StorageExtension.over(store)
    asyncio.run(extension.start())
    asyncio.run(extension.shutdown())
    with pytest.raises(StoreClosed):
        read_one(store)
    asyncio.run(extension.start())
    assert read_one(store) == 1
    asyncio.run(extension.shutdown())
