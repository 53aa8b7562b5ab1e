"""Key lookups: cached, and shared between concurrent requests with the same key."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from receiver.auth import Authenticator
from sounding.errors import Unauthenticated
from storage import keys
from storage.store import Store


def test_concurrent_lookups_of_one_key_share_one_query(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    key, _ = keys.create_key(store, "shop")
    statements: list[str] = []

    @event.listens_for(store.reader, "before_cursor_execute")
    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "api_keys" in statement:
            statements.append(statement)

    async def burst() -> list[int]:
        auth = Authenticator(store, cache_seconds=60)
        found = await asyncio.gather(*(auth.project_for(f"Bearer {key}") for _ in range(40)))
        with pytest.raises(Unauthenticated):
            await auth.project_for("Bearer not-a-key")
        await auth.project_for(f"Bearer {key}")  # from the cache
        return list(found)

    found = asyncio.run(burst())
    assert len(set(found)) == 1
    assert len(statements) == 2  # the shared lookup and the unknown key
    store.dispose()
