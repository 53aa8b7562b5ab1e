"""What the alerts page saves is acted on: a destination and a rule added there
deliver alerts (signed with the page's secret), and "Send a test alert" reaches the
destination, once the collector has read the settings again (every 10 s)."""

from __future__ import annotations

import time
from collections.abc import Callable

from extensions.alerts import signature
from tests.dashboard.data import error, post_ok
from tests.dashboard.test_alert_settings import env, post
from tests.dashboard.test_setup import logged_in
from tests.extensions.alerts.test_delivery import alerts_of, wait_until
from tests.support.alert_receiver import receiving
from tests.support.server import Server

SECRET = "page-made-secret-0123456789abcdef"


def test_a_destination_and_rule_added_on_the_page_deliver_alerts(
        start: Callable[..., Server], sqlite_url: str) -> None:
    with receiving() as receiver:
        server = start(sqlite_url, env={**env(), "SOUNDING__ALERTS__POLL_S": "0.05"})
        session = logged_in(server)
        added = post(session, server, "/destinations", {
            "name": "hook", "type": "webhook", "url": receiver.url, "secret": SECRET})
        assert added.status_code == 303, added.text
        assert post(session, server, "/rules", {"on": "new_group", "destinations": "hook"}
                    ).status_code == 303
        assert post(session, server, "/test", {"destination": "hook"}).status_code == 303
        # Delivered once the settings are read again: the test alert waits for it.
        wait_until(lambda: [r for r in receiver.accepted() if r.json().get("kind") == "test"],
                   "the test alert", server, timeout=40)
        post_ok(server, "/ingest/errors", error("fp-page"))
        wait_until(lambda: alerts_of(receiver, "new_group"), "the new_group alert", server)
        (alert,) = alerts_of(receiver, "new_group")
        assert alert["group"]["fingerprint"] == "fp-page"
        delivered = next(r for r in receiver.accepted() if r.json().get("kind") == "new_group")
        header = {k.lower(): v for k, v in delivered.headers.items()}["sounding-signature"]
        assert signature.verify(SECRET, delivered.body, header, time.time())
