"""GET /health: no authentication, the full form of the contract."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import requests

from tests.support.server import Server


def test_health_is_ok_without_auth(server: Server) -> None:
    response = requests.get(server.base + "/health", timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["status"] == "ok"
    assert body["db_ok"] is True
    assert isinstance(body["uptime_seconds"], int) and body["uptime_seconds"] >= 0


def test_health_is_503_while_the_store_is_unreachable(start: Callable[..., Server],
                                                       tmp_path: Path) -> None:
    db = tmp_path / "data" / "sounding.db"
    server = start(f"sqlite:///{db}")
    # Take the database away from under the running collector.
    for path in db.parent.iterdir():
        path.unlink()
    db.parent.rmdir()
    db.parent.write_text("not a directory")  # the path can no longer be opened
    time.sleep(1.1)  # the health check reuses a ping for up to a second
    response = requests.get(server.base + "/health", timeout=10)
    assert response.status_code == 503
    assert response.json()["db_ok"] is False
    assert response.json()["status"] != "ok"
