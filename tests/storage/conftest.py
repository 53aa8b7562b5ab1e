"""Fixtures of the storage tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage.store import Store


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    """A store upgraded to the newest schema, over SQLite and PostgreSQL (db_url)."""
    store = Store(db_url)
    store.upgrade()
    yield store
    store.dispose()
