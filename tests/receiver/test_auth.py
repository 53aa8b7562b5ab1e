"""Key lookups: every active key's hash in memory, so that neither a known key nor
a flood of unknown ones costs a query; kept fresh every cache_seconds."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import event

from extensions.auth import KeyAuthenticator
from model.errors import Unauthenticated
from receiver.auth import project_for
from storage import keys
from storage.store import Store
from tests.sounding.test_cli import sounding
from tests.support.server import Server
from tests.support.tcp_proxy import TcpProxy


def _key_queries(store: Store) -> list[str]:
    statements: list[str] = []

    @event.listens_for(store.reader, "before_cursor_execute")
    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "api_keys" in statement:
            statements.append(statement)

    return statements


def _well_formed_unknown_key() -> str:
    return keys.KEY_PREFIX + secrets.token_urlsafe(32)


def test_neither_known_keys_nor_a_flood_of_unknown_ones_query_the_database(
        tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    key, _ = keys.create_key(store, "shop")
    statements = _key_queries(store)

    async def flood() -> list[int]:
        auth = KeyAuthenticator(store, cache_seconds=60)
        await auth.start()
        found = await asyncio.gather(*(project_for(auth, f"Bearer {key}") for _ in range(40)))
        for _ in range(2_000):
            with pytest.raises(Unauthenticated, match="unknown or revoked"):
                await project_for(auth, f"Bearer {_well_formed_unknown_key()}")
        with pytest.raises(Unauthenticated, match="malformed"):
            await project_for(auth, "Bearer " + "x" * 10_000)
        await auth.shutdown()
        return list(found)

    found = asyncio.run(flood())
    assert len(set(found)) == 1
    assert len(statements) == 1  # the key set, read once at start
    store.dispose()


def _ingest(server: Server, key: str, body: Any = None) -> requests.Response:
    return requests.post(server.base + "/ingest/deploys", json=body or {"git_sha": "abc"},
                         timeout=10, headers={"Authorization": f"Bearer {key}"})


def _wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.mark.postgres
def test_keys_answer_from_memory_while_the_database_is_away_and_follow_the_cli(
        start: Callable[..., Server], pg_url: str) -> None:
    """Two collectors on one PostgreSQL, one through a proxy that cuts its link.
    Cut off, it still refuses unknown keys with 401 (not 503: no lookup) and lets a
    known key through to the body check (400), well past cache_seconds. A key made
    with the CLI works on both, and a revoked one stops, within cache_seconds."""
    env = {"SOUNDING__AUTH__CACHE_SECONDS": "1"}
    with TcpProxy() as proxy:
        cut_off = start(proxy.url_for(pg_url), env=env)
        direct = start(pg_url, env=env)
        assert _ingest(cut_off, cut_off.key).status_code == 202

        proxy.cut()
        time.sleep(2.5)  # past cache_seconds: any per-key cache has expired
        for _ in range(200):
            response = _ingest(cut_off, _well_formed_unknown_key())
            assert response.status_code == 401, response.text
        response = _ingest(cut_off, cut_off.key, {"version": "no git_sha"})
        assert response.status_code == 400, response.text
        proxy.restore()

        created = sounding(pg_url, "keys", "create", "--project", "shop")
        assert created.returncode == 0, created.stderr
        new_key = next(word for word in created.stdout.split() if word.startswith("snd_"))
        for server in (cut_off, direct):
            _wait_for(lambda s=server: _ingest(s, new_key).status_code == 202,  # type: ignore[misc]
                      timeout=5, what="the new key to work")
        key_id = keys.key_id_of(keys.hash_key(new_key))
        assert sounding(pg_url, "keys", "revoke", key_id).returncode == 0
        for server in (cut_off, direct):
            _wait_for(lambda s=server: _ingest(s, new_key).status_code == 401,  # type: ignore[misc]
                      timeout=5, what="the revoked key to stop")
        assert new_key not in cut_off.log() + direct.log()
        cut_off.output.clear()  # the refresh that failed while cut off is logged, once
