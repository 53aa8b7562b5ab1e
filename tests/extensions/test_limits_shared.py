"""Two collectors on one PostgreSQL hold a project's limit as its total: both flooded
at once, together they accept what one bucket allows (docs/limits.md: at most the
burst plus the rate over the flood, and at least that less a slice per process per
lease); each alone would have accepted as much again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from tests.receiver.sentry.helpers import KEY, KEYS
from tests.support.server import Server

RATE, BURST, BATCH = 40, 40, 5
SECONDS = 4.0
ERRORS = {"errors": [{"exception_class": "KeyError", "message": f"m{i}",
                      "backtrace": ["app.py:1 in f"], "fingerprint": "shared"}
                     for i in range(BATCH)]}


def flood(server: Server, until: float, accepted: list[int], refused: list[int]) -> None:
    with requests.Session() as session:
        while time.monotonic() < until:
            answer = session.post(server.base + "/ingest/errors/batch", json=ERRORS,
                                  headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
            if answer.status_code == 202:
                accepted.append(answer.json()["accepted"])
            else:
                assert answer.status_code == 429, answer.text
                refused.append(1)


@pytest.mark.postgres
@pytest.mark.parametrize("shared", ["auto", "false"])
def test_two_collectors_hold_the_projects_limit_together(
        start: Callable[..., Server], pg_url: str, tmp_path: Path, shared: str) -> None:
    config = tmp_path / "limits.yaml"
    config.write_text(f"""
auth:
  limits:
    shared: {shared}
    projects:
      acme:
        error: {{rate: {RATE}, burst: {BURST}}}
""")
    servers = [start(pg_url, keys=KEYS, config=str(config)) for _ in range(2)]
    accepted: list[int] = []
    refused: list[int] = []
    began = time.monotonic()
    threads = [threading.Thread(target=flood, args=(server, began + SECONDS, accepted,
                                                    refused))
               for server in servers for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.monotonic() - began
    allowed = BURST + RATE * took
    total = sum(accepted)
    print(f"shared={shared}: accepted {total} of {allowed:.0f} allowed in {took:.2f} s")
    assert refused, "the flood was not limited at all"
    if shared == "false":
        # The counter-test: each collector its own bucket, together well over.
        assert total > 1.4 * allowed
        return
    # Over: a request may take the bucket into debt, once per process.
    assert total <= allowed + 2 * BATCH, (total, allowed)
    # Under: slices a process held and threw away (a tenth of a second of the rate
    # each, per process, per lease).
    assert total >= 0.8 * allowed, (total, allowed)


def test_a_serve_groups_workers_hold_the_limit_together_on_sqlite(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path) -> None:
    """Two serve workers on SQLite share the buckets through the database file
    (`shared: auto` in a group): the burst is the project's, not each worker's."""
    config = tmp_path / "limits.yaml"
    config.write_text("auth:\n  limits:\n    projects:\n      acme:\n"
                      "        error: {rate: 0.01, burst: 30}\n")
    server = start(sqlite_url, keys=KEYS, config=str(config), env={"SOUNDING_WORKERS": "2"})
    accepted: list[int] = []
    refused: list[int] = []
    threads = [threading.Thread(target=flood, args=(server, time.monotonic() + 3, accepted,
                                                    refused))
               for _ in range(4)]  # new connections land on either worker
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert refused
    # The burst, and at most one request into debt per worker.
    assert 30 <= sum(accepted) <= 30 + 2 * BATCH, sum(accepted)
