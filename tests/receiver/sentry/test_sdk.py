"""The real Sentry Python SDK, with only its DSN pointed at Sounding (issue 12,
"Real clients in the tests")."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.receiver.sentry.helpers import OTHER_KEY, dsn, sentry_items, start_sentry
from tests.receiver.sentry.test_door_transport import hold_body_budget
from tests.support import clients
from tests.support.server import Server, collectors

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

HERE = Path(__file__).resolve().parent


def run_app(server_dsn: str, scenario: str, compression: str = "none",
            env: dict[str, str] | None = None) -> dict[str, Any]:
    """sdk_app.py's scenario, with `env` added to its environment."""
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("SENTRY", "OTEL_"))}
    full_env.update({"SENTRY_DSN": server_dsn, "SDK_COMPRESSION": compression, **(env or {})})
    python = clients.python(clients.SENTRY_SDK_2)
    done = subprocess.run([python, str(HERE / "sdk_app.py"), scenario], env=full_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def sentry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One SQLite collector for the module's tests of its usual settings: each reads the
    items counted while it ran (`counted`)."""
    with collectors(tmp_path_factory.mktemp("sentry")) as start:
        yield start_sentry(start)


def counted(server: Server, before: dict[str, float]) -> dict[str, float]:
    """The Sentry items counted since `before` (sentry_items), by type."""
    return {kind: value - before.get(kind, 0) for kind, value in sentry_items(server).items()
            if value != before.get(kind, 0)}


@pytest.mark.parametrize("compression", ["none", "gzip", "br"])
def test_the_sdks_transport_compressed_or_not_is_read(sentry: Server, compression: str) -> None:
    before = sentry_items(sentry)
    result = run_app(dsn(sentry), "sessions", compression)
    assert result["compression"] == (None if compression == "none" else compression)
    assert not [line for line in result["log"] if line.startswith("ERROR")], result["log"]
    assert counted(sentry, before) == {"session": 1, "client_report": 1, "attachment": 1}


def test_a_wrong_key_is_refused_and_the_sdk_logs_it(sentry: Server) -> None:
    before = sentry_items(sentry)
    for key, status in [("0" * 32, 401), (OTHER_KEY, 403)]:
        result = run_app(dsn(sentry, key), "sessions")
        assert any(f"Unexpected status code: {status}" in line for line in result["log"]), \
            result["log"]
    assert counted(sentry, before) == {}


def test_overload_makes_the_sdk_back_off(start: Callable[..., Server], sqlite_url: str) -> None:
    """While the body budget is held, the SDK's envelope is answered 429 with
    X-Sentry-Rate-Limits: its rate limiter records a limit on every category."""
    server = start_sentry(start, sqlite_url, env={
        "SOUNDING__RECEIVERS__HTTP__MAX_INFLIGHT_BODY_BYTES": "10000"})
    holder = hold_body_budget(server, 9_000)
    before = datetime.now(UTC)
    result = run_app(dsn(server), "sessions")
    holder.close()
    assert "WARNING Rate-limited via x-sentry-rate-limits" in result["log"], result["log"]
    # No category in the header: the limit is on all of them (the SDK's key None).
    assert datetime.fromisoformat(result["disabled_until"]["None"]) > before
    assert sentry_items(server) == {}
