"""One real collector per fuzz module, and what must hold once the module is done:
no decode worker restarted, /health 200, no traceback in the log."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.fuzz.doors import LOG
from tests.receiver.sentry.helpers import KEYS
from tests.support.postgres import fresh_database
from tests.support.server import Server, start_server

# Trace bodies from this size go to a decode worker, smaller ones are decoded on the
# event loop: the fuzzed bodies straddle it, so both paths are exercised.
DECODE_MIN_BYTES = 1024
RESTARTS = re.compile(r"^sounding_decode_worker_restarts_total(?:\{[^}]*\})? (\S+)$", re.M)


@pytest.fixture(scope="module")
def fuzz_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("fuzz") / "sounding.db"
    yield from collector(request, f"sqlite:///{path}", wait_for=2, env={
        # The standard OTLP/HTTP port too (its /v1/traces is a door of its own).
        "SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true",
    })


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres",
                                                                    marks=pytest.mark.postgres)])
def sentry_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[Server]:
    """A collector whose projects have Sentry-style (DSN-safe) keys."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("fuzz") / "sounding.db"
        yield from collector(request, f"sqlite:///{path}", keys=KEYS)
    else:
        with fresh_database() as url:
            yield from collector(request, url, keys=KEYS)


def collector(request: pytest.FixtureRequest, db_url: str, keys: dict[str, str] | None = None,
              env: dict[str, str] | None = None, wait_for: int = 1) -> Iterator[Server]:
    """A fuzz module's collector on `db_url`: yielded, then held to the invariants."""
    server = start_server(db_url, keys=keys, wait_for=wait_for, env={
        "SOUNDING_DECODE_WORKERS": "1",
        "SOUNDING__SERVICE__DECODE_MIN_BYTES": str(DECODE_MIN_BYTES),
        "SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN,
        **(env or {}),
    })
    try:
        yield server
        unharmed(server)
    finally:
        code = server.stop()
        if LOG:  # beside the violations: one traceback per kind of server failure
            with open(f"{LOG}.{request.module.__name__}.log", "w") as out:
                out.write(server.log())
    assert code == 0, server.log()
    assert "Traceback" not in server.log(), server.log()


def unharmed(server: Server) -> None:
    """The module's invariants, checked on the live server."""
    health = requests.get(server.base + "/health", timeout=10)
    assert health.status_code == 200, health.text
    metrics = requests.get(server.base + "/metrics", timeout=10).text
    restarts = sum(float(value) for value in RESTARTS.findall(metrics))
    assert restarts == 0, f"{restarts:.0f} decode worker restarts:\n{server.log()}"
    assert not re.search(r"decode worker \d+ stopped", server.log()), server.log()
