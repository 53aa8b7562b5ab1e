"""Release health and user feedback end to end with @sentry/node from npm
(tests/js/send_sessions.js) sending straight to Sounding, on SQLite and PostgreSQL:
an HTTP server with `release` set serves requests (the SDK's http integration counts
one session each), some of which crash; then Sentry.captureFeedback about a crash.
The release API and page show exactly the figures counted by hand from its FIXTURE,
and the feedback shows on its issue, escaped."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from tests.receiver.sentry.e2e import api, start_with_api
from tests.receiver.sentry.helpers import dsn
from tests.receiver.sentry.test_release_health import page
from tests.receiver.sentry.test_sentry_node import JS_DIR
from tests.support import clients
from tests.support.server import Server

# Long (tests/conftest.py): ~26 s alone.
pytestmark = [pytest.mark.clients(clients.SENTRY_JAVASCRIPT), pytest.mark.long]


def run_node(server_dsn: str) -> dict[str, Any]:
    if shutil.which("node") is None:
        pytest.fail("node is required: `make test-deps` installs the JavaScript client")
    done = subprocess.run(["node", str(JS_DIR / "send_sessions.js"), server_dsn],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_node_sessions_and_feedback(start: Callable[..., Server], db_url: str) -> None:
    server = start_with_api(start, db_url)
    sent = run_node(dsn(server))
    # By hand from send_sessions.js: 7 ok, 2 handled, 3 crashes; no user.
    (health,) = api(server, "/releases", range="24h")["releases"]
    assert (health["release"], health["environment"], health["sessions"], health["exited"],
            health["errored"], health["crashed"], health["abnormal"], health["users"]) == (
        "shop-node@2.0.0", "prod", 12, 7, 2, 3, 0, 0)
    assert health["crash_free_sessions"] == 0.75 and health["crash_free_users"] is None
    assert health["adoption"] == 1.0
    one = api(server, "/releases/shop-node%402.0.0", range="24h")
    assert (one["total"]["sessions"], one["total"]["crash_free_sessions"]) == (12, 0.75)
    assert '<dd class="crash-free-sessions">75.0%</dd>' in page(
        server, "/releases/shop-node%402.0.0?range=24h")

    listed = api(server, "/error-groups", status="all")["items"]
    [crash] = [i["group"] for i in listed if i["group"]["exception_class"] == "TypeError"]
    [said] = api(server, f"/error-groups/{crash['id']}")["feedback"]
    assert (said["source"], said["name"], said["email"], said["url"],
            said["associated_event_id"], said["release"], said["environment"]) == (
        "feedback", "Grace Hopper", "grace@example.com", "https://shop.example/checkout",
        sent["crashes"][0], "shop-node@2.0.0", "prod")
    assert said["message"] == "Checkout <b>crashed</b> twice <img src=x onerror=alert(1)>"
    text = page(server, f"/errors/{crash['id']}")
    assert "<img src=x" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    # The feedback is not an error: no group of its own.
    assert not [i for i in listed if "crashed" in (i["group"]["message"] or "")
                and i["group"]["exception_class"] != "TypeError"]
