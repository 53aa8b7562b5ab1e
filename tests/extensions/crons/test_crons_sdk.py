"""Cron monitors end to end (issue 26, "Cron monitors"): a job wrapped in the real
Python sentry-sdk's `@monitor` runs on time, fails, is skipped and runs again; the
collector's checker sees an ok timeline, alerts cron_failed once, cron_missed once
within 60 s after the margin, and cron_recovered once, through the real alert
outbox to a real webhook receiver; on SQLite and PostgreSQL. The curl check-in door
and two collectors on one PostgreSQL (one missed-check-in alert) are here too."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.extensions.alerts.test_delivery import alerts_env, alerts_of, settled, wait_until
from tests.receiver.sentry.helpers import KEY, KEYS, dsn, project_id
from tests.support import clients
from tests.support.alert_receiver import AlertReceiver, receiving
from tests.support.server import Server

HERE = Path(__file__).resolve().parent
# Long (tests/conftest.py): a missed check-in takes a minute of the clock.
pytestmark = [pytest.mark.clients(clients.SENTRY_SDK_2), pytest.mark.long]
SLUG = "nightly-report"
RULES = ("[{on: cron_failed, destinations: [hook]}, {on: cron_missed, destinations: [hook]}, "
         "{on: cron_recovered, destinations: [hook]}]")
US = 1_000_000


def collector(start: Callable[..., Server], db_url: str, receiver: AlertReceiver,
              **env: str) -> Server:
    return start(db_url, keys=KEYS, env={**alerts_env(receiver.url, RULES),
                                         "SOUNDING__CRONS__CHECK_EVERY_S": "0.5",
                                         "SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN, **env})


def run_job(server: Server, outcome: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY")}
    python = clients.python(clients.SENTRY_SDK_2)
    done = subprocess.run([python, str(HERE / "cron_job.py"), outcome],
                          env={**env, "SENTRY_DSN": dsn(server)}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def monitor(server: Server, slug: str = SLUG) -> dict[str, Any]:
    """The monitor from the read API; {} while the checker has not made it."""
    answer = requests.get(f"{server.base}/api/v1/projects/acme/crons/{slug}",
                          headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10)
    if answer.status_code == 404:
        return {}
    assert answer.status_code == 200, answer.text
    document: dict[str, Any] = answer.json()
    return document


def statuses(server: Server, slug: str = SLUG) -> list[str]:
    """The monitor's check-ins, oldest first."""
    return [c["status"] for c in reversed(monitor(server, slug).get("check_ins", []))]


def start_of_a_minute() -> None:
    """Wait for a minute's second 2: the runs below then share their minute, and
    the missed check-in comes where the test expects it."""
    second = time.time() % 60
    if second > 40 or second < 2:
        time.sleep((62 - second) % 60)


def test_a_monitored_job_on_time_then_failing_then_skipped_then_back(
        db_url: str, start: Callable[..., Server]) -> None:
    with receiving() as receiver:
        server = collector(start, db_url, receiver)
        start_of_a_minute()
        run_job(server, "ok")
        wait_until(lambda: statuses(server) == ["ok"], "the ok check-in", server)
        # The row is ok once stored; the monitor once the checker has applied it.
        wait_until(lambda: monitor(server)["monitor"]["status"] == "ok", "the checker", server)
        found = monitor(server)
        (ok,) = found["check_ins"]
        assert ok["duration_s"] >= 0.2 and ok["environment"] == "production"
        assert found["monitor"]["schedule"] == "every 1 minute"
        assert found["monitor"]["status"] == "ok" and not found["incidents"]

        run_job(server, "fail")
        try:
            wait_until(lambda: alerts_of(receiver, "cron_failed"), "the cron_failed alert",
                       server)
        except AssertionError as missing:
            # Say what the monitor and the receiver held, so that a failure shows which
            # step stalled (a loaded run once lost the error check-in in the checker:
            # tests/storage/crons/test_checker.py has that case now).
            raise AssertionError(f"{missing}\nmonitor: {monitor(server)}\nreceived: "
                                 f"{[r.body[:400] for r in receiver.received]}") from None
        assert statuses(server) == ["ok", "error"]
        (failed,) = alerts_of(receiver, "cron_failed")
        assert failed["monitor"]["slug"] == SLUG and failed["monitor"]["reason"] == "error"
        assert failed["title"] == f"Cron monitor {SLUG} failed"
        assert failed["link"].endswith(f"/projects/acme/crons/{SLUG}")

        # Skipped: the next run was due at the next minute, with no margin.
        deadline_s = monitor(server)["monitor"]["deadline_us"] / US
        wait_until(lambda: alerts_of(receiver, "cron_missed"), "the cron_missed alert",
                   server, timeout=deadline_s - time.time() + 60)
        noticed_s = time.time()
        assert deadline_s <= noticed_s <= deadline_s + 60
        (missed,) = alerts_of(receiver, "cron_missed")
        assert missed["monitor"]["incident_id"] == failed["monitor"]["incident_id"]

        run_job(server, "ok")
        wait_until(lambda: alerts_of(receiver, "cron_recovered"), "the cron_recovered alert",
                   server)
        time.sleep(1.5)  # three more turns of the checker: nothing more is sent
        wait_until(lambda: settled(server), "delivery", server)
        assert sorted(a["kind"] for a in alerts_of(receiver)) == [
            "cron_failed", "cron_missed", "cron_recovered"]
        assert statuses(server)[:3] == ["ok", "error", "missed"]
        assert statuses(server)[-1] == "ok"
        (incident,) = monitor(server)["incidents"]
        assert incident["reason"] == "error" and incident["resolved_us"] is not None
        assert monitor(server)["monitor"]["status"] == "ok"


def curl(url: str, *args: str) -> tuple[int, str]:
    """curl as a shell job runs it: the status and the body."""
    done = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *args, url],
                          capture_output=True, text=True, timeout=30)
    body, _, status = done.stdout.rpartition("\n")
    return int(status), body


def test_the_curl_check_in_door(db_url: str, start: Callable[..., Server]) -> None:
    with receiving() as receiver:
        server = collector(start, db_url, receiver, SOUNDING_ACCESS_LOG="true")
        base = f"{server.base}/api/{project_id(server)}/cron/backup/{KEY}/"
        config = ('{"monitor_config": {"schedule": {"type": "crontab", "value": "0 3 * * *"}, '
                  '"timezone": "Europe/Riga", "checkin_margin": 5}, "status": "in_progress"}')
        assert curl(base, "-X", "POST", "-H", "Content-Type: application/json",
                    "--data-raw", config) == (202, "")
        time.sleep(0.3)
        assert curl(base + "?status=ok")[0] == 202
        wait_until(lambda: statuses(server, "backup") == ["ok"], "the run finished", server)
        found = monitor(server, "backup")
        (run,) = found["check_ins"]  # the ok without an id finished the run in progress
        assert run["duration_s"] >= 0.3
        assert found["monitor"]["schedule"] == "0 3 * * * (Europe/Riga)"
        assert found["monitor"]["checkin_margin"] == 5
        # Bad input is a 400 naming the field; a wrong key is refused.
        status, body = curl(base + "?status=done")
        assert status == 400 and "check_in.status" in body
        assert curl(f"{server.base}/api/{project_id(server)}/cron/backup/{'0' * 32}/"
                    "?status=ok")[0] == 401
        status, body = curl(base, "-X", "POST", "--data-raw",
                            '{"monitor_config": {"schedule": {"type": "interval", '
                            '"value": 0, "unit": "fortnight"}}}')
        assert status == 400
        assert "monitor_config.schedule.value" in body and "schedule.unit" in body
        # The key in the path is a secret: the access log shows it filtered.
        assert "/cron/backup/[Filtered]/?status=ok" in server.log()
        assert KEY not in server.log()


def test_two_collectors_on_one_database_alert_a_missed_check_in_once(
        pg_url: str, start: Callable[..., Server]) -> None:
    with receiving() as receiver:
        first = collector(start, pg_url, receiver)
        second = collector(start, pg_url, receiver)
        start_of_a_minute()
        url = f"{first.base}/api/{project_id(first)}/cron/sync/{KEY}/"
        answer = requests.post(url, json={"status": "ok", "monitor_config": {
            "schedule": {"type": "interval", "value": 1, "unit": "minute"},
            "checkin_margin": 0}}, timeout=10)
        assert answer.status_code == 202
        wait_until(lambda: monitor(second, "sync").get("monitor", {}).get("deadline_us"),
                   "the monitor", second)
        deadline_s = monitor(second, "sync")["monitor"]["deadline_us"] / US
        wait_until(lambda: alerts_of(receiver, "cron_missed"), "the cron_missed alert",
                   first, timeout=deadline_s - time.time() + 60)
        time.sleep(2.0)  # both checkers take several more turns
        wait_until(lambda: settled(first), "delivery", first)
        assert len(alerts_of(receiver, "cron_missed")) == 1
        assert first.query("SELECT count(*) FROM cron_incidents") == [(1,)]
        assert first.query("SELECT count(*) FROM alert_facts WHERE kind = 'cron_missed'") == [
            (1,)]
