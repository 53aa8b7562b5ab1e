"""A release whose crash-free sessions fall below a rule's threshold alerts once,
and once more when they recover, through the collector and the alert outbox, on
SQLite and PostgreSQL: sessions arrive as a Sentry SDK sends them (a `sessions`
envelope), the evaluator (evaluate.py, every 0.2 s here) records the firing fact
and the recovery, the sender delivers each to a webhook once."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from tests.extensions.alerts.test_delivery import alerts_env, alerts_of, settled, wait_until
from tests.receiver.sentry.helpers import KEYS, post_envelope
from tests.support.alert_receiver import receiving
from tests.support.server import Server

# Long (tests/conftest.py): ~27 s alone.
pytestmark = pytest.mark.long
RULE = ("[{on: crash_free_sessions, destinations: [hook], env: prod, threshold: 0.9, "
        "minutes: 5, min_sessions: 10}]")


def sessions(minute_s: int, exited: int, crashed: int, release: str = "shop@3.0") -> bytes:
    """A `sessions` envelope as @sentry/node sends it (its sent_at makes each unique)."""
    started = time.strftime("%Y-%m-%dT%H:%M:00.000Z", time.gmtime(minute_s))
    item = json.dumps({"attrs": {"release": release, "environment": "prod"},
                       "aggregates": [{"started": started, "exited": exited, "errored": 0,
                                       "crashed": crashed}]})
    header = json.dumps({"sent_at": f"{time.time():.6f}"})
    return f'{header}\n{{"type":"sessions"}}\n{item}\n'.encode()


def test_a_release_below_its_crash_free_threshold_alerts_once_and_recovers_once(
        db_url: str, start: Callable[..., Server]) -> None:
    # Two minutes ago: inside the rule's last 5 whole minutes for the test's length.
    minute_s = int(time.time() // 60 * 60 - 120)
    with receiving() as receiver:
        collector = start(db_url, keys=KEYS, env=alerts_env(receiver.url, RULE,
                                                            evaluate_s="0.2"))
        # 5 sessions, 2 crashed: too few to judge.
        assert post_envelope(collector, sessions(minute_s, 3, 2)).status_code == 200
        time.sleep(0.8)
        assert alerts_of(receiver) == []
        # 20 sessions, 4 crashed: 80% crash-free, below 90%.
        assert post_envelope(collector, sessions(minute_s, 13, 2)).status_code == 200
        # Another release, healthy: never alerts.
        assert post_envelope(collector, sessions(minute_s, 30, 0, "shop@2.9")
                             ).status_code == 200
        wait_until(lambda: alerts_of(receiver, "crash_free_sessions"), "the alert", collector)
        time.sleep(1.0)  # several more evaluations: nothing more
        (fired,) = alerts_of(receiver)
        assert fired["state"] == "firing" and fired["subject"] == "shop@3.0"
        assert fired["title"] == "Crash-free sessions of shop@3.0 in prod below 90.0%: 80.0%"
        assert fired["link"] == ("https://sounding.example.com/projects/acme/releases/"
                                 "shop%403.0")
        # 40 sessions, 4 crashed: 90%, back at the threshold.
        assert post_envelope(collector, sessions(minute_s, 20, 0)).status_code == 200
        wait_until(lambda: len(alerts_of(receiver)) == 2, "the recovery", collector)
        time.sleep(1.0)
        wait_until(lambda: settled(collector), "delivery", collector)
        fired, recovered = alerts_of(receiver)
        assert recovered["state"] == "recovered" and recovered["subject"] == "shop@3.0"
        assert recovered["details"]["value"] == 0.9
        assert collector.query("SELECT count(*) FROM alert_facts WHERE kind = "
                               "'crash_free_sessions'") == [(2,)]
