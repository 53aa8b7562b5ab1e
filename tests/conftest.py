"""Fixtures: the real collector on a real socket, over a real SQLite file or a
real PostgreSQL database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.postgres import fresh_database
from tests.support.server import Server, start_server


def _check_quiet(server: Server) -> None:
    """Noise is a bug: a clean run logs no traceback."""
    assert "Traceback" not in server.log(), server.log()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'sounding.db'}"


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sounding.db'}"
    else:
        with fresh_database() as url:
            yield url


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start collectors; each is stopped with SIGTERM at the end and must exit 0."""
    servers: list[Server] = []

    def _start(db_url: str | None = None, **kwargs: Any) -> Server:
        server = start_server(db_url or f"sqlite:///{tmp_path / 'sounding.db'}", **kwargs)
        servers.append(server)
        return server

    yield _start
    for server in servers:
        code = server.stop()
        assert code == 0, f"collector exited with {code}:\n{server.log()}"
        _check_quiet(server)


@pytest.fixture
def server(start: Callable[..., Server], db_url: str) -> Server:
    """One collector, on SQLite and again on PostgreSQL."""
    return start(db_url)


@pytest.fixture
def sqlite_server(start: Callable[..., Server], sqlite_url: str) -> Server:
    """One collector on SQLite, for tests whose behaviour does not depend on the store."""
    return start(sqlite_url)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One SQLite collector for a whole module: for rules that store nothing."""
    path = tmp_path_factory.mktemp("shared") / "sounding.db"
    server = start_server(f"sqlite:///{path}")
    yield server
    assert server.stop() == 0, server.log()
    _check_quiet(server)
