"""@sentry/node's Sentry.withMonitor (tests/js/cron_job.js), unchanged but for its DSN:
its check-ins make the monitor from the SDK's camelCase configuration and show a run
ok and a run failed, each with its duration (SQLite; the checker is the one of
test_crons_sdk.py, run on both stores there)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable

import pytest

from tests.extensions.alerts.test_delivery import wait_until
from tests.extensions.crons.test_crons_sdk import collector, monitor, statuses
from tests.receiver.sentry.helpers import dsn
from tests.support import clients
from tests.support.alert_receiver import receiving
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_JAVASCRIPT)

JS_DIR = clients.js_dir()
SLUG = "node-report"


def run_job(server: Server, outcome: str) -> None:
    if shutil.which("node") is None:
        pytest.fail("node is required: `make test-deps` installs the JavaScript client")
    done = subprocess.run(["node", str(JS_DIR / "cron_job.js"), dsn(server), outcome],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_with_monitor_reports_its_runs(start: Callable[..., Server], sqlite_url: str) -> None:
    with receiving() as receiver:
        server = collector(start, sqlite_url, receiver)
        run_job(server, "ok")
        run_job(server, "fail")
        wait_until(lambda: statuses(server, SLUG) == ["ok", "error"], "both runs", server)
        wait_until(lambda: monitor(server, SLUG)["monitor"]["status"] == "error",
                   "the checker", server)
        found = monitor(server, SLUG)
        assert found["monitor"]["schedule"] == "*/5 * * * * (Europe/Riga)"
        assert (found["monitor"]["checkin_margin"], found["monitor"]["max_runtime"],
                found["monitor"]["failure_threshold"]) == (2, 10, 2)
        assert all(c["duration_s"] >= 0.2 and c["environment"] == "production"
                   for c in found["check_ins"])
        assert found["incidents"] == []  # one failure of the two that open one
