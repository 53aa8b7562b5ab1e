"""Spike protection on the real server, on both stores: a protected project whose
volume jumps past its multiple of the baseline is capped (its excess answered 429),
an alert fact says protection started, and once it calms down another says it
stopped and the cap is lifted."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.helpers import KEYS
from tests.receiver.test_limits import post_error
from tests.support.server import Server


def facts(server: Server) -> list[dict]:
    rows = server.query("SELECT details FROM alert_facts WHERE kind = 'spike_protection' "
                        "ORDER BY id")
    return [d if isinstance(d, dict) else json.loads(d) for (d,) in rows]


def wait(check: Callable[[], bool], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_a_spike_is_capped_and_an_alert_says_when_it_starts_and_stops(
        start: Callable[..., Server], db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "spike.yaml"
    path.write_text("auth:\n  limits:\n    usage_flush_seconds: 0.2\n"
                    "    refresh_seconds: 0.3\n    spike_check_seconds: 1\n"
                    "    spike_min_rate: 1\n")
    server = start(db_url, keys=KEYS, config=str(path),
                   env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    answer = requests.post(server.base + "/api/v1/projects/acme/limits", timeout=10,
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                           json={"spike_protection": 3})
    assert answer.status_code == 200, answer.text
    # No history: the baseline is the floor, 1 a second; 3 times it is a spike.
    statuses: list[int] = []
    until = time.monotonic() + 8
    while time.monotonic() < until and 429 not in statuses[-5:]:
        statuses.append(post_error(server).status_code)
        time.sleep(0.02)
    assert 429 in statuses, statuses
    assert wait(lambda: any(f["state"] == "started" for f in facts(server)))
    started = facts(server)[0]
    assert started["category"] == "error" and started["multiple"] == 3
    assert started["cap"] == 3 and started["rate"] > 3
    (row,) = server.query("SELECT active, cap, category FROM spike_protection")
    assert bool(row[0]) and row[2] == "error"
    # Quiet: what it offers falls under the cap, the cap is lifted.
    assert wait(lambda: any(f["state"] == "stopped" for f in facts(server)))
    assert wait(lambda: post_error(server).status_code == 202, 5)
    (row,) = server.query("SELECT active FROM spike_protection")
    assert not row[0]
