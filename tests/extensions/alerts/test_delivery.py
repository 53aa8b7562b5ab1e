"""Alerts end to end: the real collector (python -m sounding serve) on a real store,
errors sent to its ingest API, alerts received by a real HTTP receiver."""

from __future__ import annotations

import hashlib
import hmac
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from extensions.alerts import rules, signature
from storage.alerts import outbox as alerts
from storage.groups import status as groups
from storage.store import Store
from tests.support import smtp
from tests.support.alert_receiver import AlertReceiver, Received, free_port, receiving
from tests.support.server import Projects, Server, collectors, project_keys, start_server

SECRET = "a-secret-of-32-characters-at-least"
WAIT_S = 30


def alerts_env(url: str, rules: str = "[{on: new_group, destinations: [hook]}, "
               "{on: regression, destinations: [hook]}]", **settings: str) -> dict[str, str]:
    """The alerts: section through the SOUNDING__ALERTS__* override, as YAML values."""
    env = {
        "SOUNDING__ALERTS__DESTINATIONS":
            f"[{{name: hook, type: webhook, url: '{url}', secret: '{SECRET}'}}]",
        "SOUNDING__ALERTS__RULES": rules,
        "SOUNDING__ALERTS__POLL_S": "0.05",
        "SOUNDING__ALERTS__PUBLIC_URL": "https://sounding.example.com",
        # Retries within a test's patience.
        "SOUNDING__ALERTS__RETRY": "{first_s: 0.05, max_s: 0.2, give_up_s: 60}",
    }
    env.update({f"SOUNDING__ALERTS__{key.upper()}": value for key, value in settings.items()})
    return env


def error(fingerprint: str, **fields: Any) -> dict[str, Any]:
    return {"exception_class": "KeyError", "message": f"'{fingerprint}'",
            "backtrace": ["app.py:10 in handle"], "fingerprint": fingerprint, **fields}


def wait_until(condition: Callable[[], Any], what: str, server: Server | None = None,
               timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never happened" +
                                 (f":\n{server.log()}" if server else ""))
        time.sleep(0.05)


def settled(server: Server) -> bool:
    """Every fact routed and every delivery finished (sent, failed or folded)."""
    return not server.query(
        "SELECT 1 FROM alert_facts WHERE routed_us IS NULL UNION ALL "
        "SELECT 1 FROM alert_deliveries WHERE status = 'pending'")


@dataclass
class Since:
    """The module's receiver (`hook`) as one test sees it: what came after `start`."""
    receiver: AlertReceiver
    start: int

    @property
    def received(self) -> list[Received]:
        return self.receiver.received[self.start:]

    def accepted(self) -> list[Received]:
        return [r for r in self.received if r.answered == 200]

    def attempts(self) -> int:
        return len(self.received)

    def answer(self, *statuses: int) -> None:
        """Answer the next requests with `statuses`, in order."""
        with self.receiver.lock:
            self.receiver.answers.extend((status, {}) for status in statuses)


def alerts_of(receiver: AlertReceiver | Since, kind: str | None = None
              ) -> list[dict[str, Any]]:
    documents = [r.json() for r in receiver.accepted()]
    singles = [d for d in documents if d["type"] == "alert"]
    return [d for d in singles if kind is None or d["kind"] == kind]


@pytest.fixture(scope="module")
def hook() -> Iterator[AlertReceiver]:
    """The receiver of the module's collectors (`hook_projects`)."""
    with receiving() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def hook_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory,
                  hook: AlertReceiver) -> Iterator[Projects]:
    """One collector per module and store alerting `hook` on new groups and
    regressions, handing each test a project of its own. Its rate is high enough that
    the alerts of the module's tests in one minute are never folded into a digest."""
    with collectors(tmp_path_factory.mktemp("alerts")) as start:
        yield Projects(start(module_db_url, keys=project_keys(),
                             env=alerts_env(hook.url, rate_per_minute="1000")))


@pytest.fixture
def hooked(hook_projects: Projects, hook: AlertReceiver) -> tuple[Server, Since]:
    """A project of the module's collector, and what `hook` receives from now on: the
    earlier tests' deliveries all finished first, so none of them comes after."""
    server = hook_projects.take()
    wait_until(lambda: settled(server), "the earlier tests' deliveries", server)
    return server, Since(hook, hook.attempts())


def alerts_total(server: Server, status: str) -> float:
    return server.metric("sounding_alerts_total", destination="hook", status=status) or 0


def test_a_new_group_alerts_once_and_a_regression_once(hooked: tuple[Server, Since]
                                                       ) -> None:
    collector, receiver = hooked
    assert collector.post("/ingest/errors", error("fp-new", environment="production",
                                                  release="1.4.2")).status_code == 202
    wait_until(lambda: alerts_of(receiver), "the new_group alert", collector)
    for _ in range(3):  # more of the same group: nothing new
        assert collector.post("/ingest/errors", error("fp-new")).status_code == 202
    wait_until(lambda: settled(collector), "delivery", collector)
    (alert,) = alerts_of(receiver)
    assert alert["kind"] == "new_group"
    assert alert["group"]["fingerprint"] == "fp-new"
    assert (alert["environment"], alert["release"]) == ("production", "1.4.2")
    assert alert["project"]["name"] == collector.project
    (group_id,) = collector.project_rows("error_groups", "id")[0]
    assert alert["group"]["id"] == group_id
    assert alert["link"] == ("https://sounding.example.com/projects/"
                             f"{collector.project}/errors/{group_id}")

    store = Store(collector.db_url)
    try:
        resolved_at = int(time.time() * 1e6)
        assert groups.set_status(store, collector.project_id(), "fp-new", "resolved",
                                 resolved_at) == "open"
    finally:
        store.dispose()
    # A late event, dated before the resolution, does not reopen: no alert.
    late = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(resolved_at / 1e6 - 3600))
    assert collector.post("/ingest/errors", error("fp-new", timestamp=late)
                          ).status_code == 202
    wait_until(lambda: settled(collector), "routing", collector)
    assert collector.project_rows("error_groups", "status")[0][0] == "resolved"
    # A later one reopens the group: one regression alert.
    assert collector.post("/ingest/errors", error("fp-new")).status_code == 202
    wait_until(lambda: alerts_of(receiver, "regression"), "the regression alert",
               collector)
    assert collector.post("/ingest/errors", error("fp-new")).status_code == 202
    wait_until(lambda: settled(collector), "delivery", collector)
    assert [a["kind"] for a in alerts_of(receiver)] == ["new_group", "regression"]
    assert len({a["id"] for a in alerts_of(receiver)}) == 2


def test_the_signature_verifies_with_the_documented_recipe(hooked: tuple[Server, Since]
                                                           ) -> None:
    collector, receiver = hooked
    assert collector.post("/ingest/errors", error("fp-signed")).status_code == 202
    (received,) = wait_until(receiver.accepted, "the alert", collector)
    header = received.headers[signature.HEADER]
    assert signature.verify(SECRET, received.body, header, time.time())
    # The documented recipe, written out: HMAC-SHA256 over "<t>." + body.
    fields = dict(part.split("=", 1) for part in header.split(","))
    expected = hmac.new(SECRET.encode(), fields["t"].encode() + b"." + received.body,
                        hashlib.sha256).hexdigest()
    assert hmac.compare_digest(expected, fields["v1"])
    assert abs(int(fields["t"]) - time.time()) < 300
    assert received.headers["Sounding-Alert-Id"] == received.json()["id"]
    assert not signature.verify("another-secret-of-32-characters!", received.body,
                                header, time.time())
    assert not signature.verify(SECRET, received.body + b" ", header, time.time())


def test_a_receiver_failing_three_times_gets_the_alert_once_after_the_retries(
        hooked: tuple[Server, Since]) -> None:
    collector, receiver = hooked
    receiver.answer(500, 500, 500)
    retried, sent = alerts_total(collector, "retried"), alerts_total(collector, "sent")
    assert collector.post("/ingest/errors", error("fp-retry")).status_code == 202
    wait_until(receiver.accepted, "the delivery", collector)
    wait_until(lambda: settled(collector), "delivery", collector)
    assert [r.status for r in receiver.received] == [500, 500, 500, 200]
    assert len({r.json()["id"] for r in receiver.received}) == 1  # one alert, retried
    ((status, attempts),) = collector.project_rows("alert_deliveries", "status, attempts")
    assert (status, attempts) == ("sent", 4)  # three failed, one sent
    assert alerts_total(collector, "retried") - retried == 3
    assert alerts_total(collector, "sent") - sent == 1


def test_a_receiver_refusing_for_good_marks_the_delivery_failed(
        hooked: tuple[Server, Since]) -> None:
    collector, receiver = hooked
    receiver.answer(400)
    failed = alerts_total(collector, "failed")
    assert collector.post("/ingest/errors", error("fp-refused")).status_code == 202
    wait_until(lambda: settled(collector) and receiver.attempts(), "the attempt",
               collector)
    assert receiver.attempts() == 1  # a 400 is not retried
    ((status, error_text),) = collector.project_rows("alert_deliveries",
                                                     "status, last_error")
    assert (status, error_text) == ("failed", "http 400")
    assert alerts_total(collector, "failed") - failed == 1
    assert "/hook" not in collector.log()  # the URL's path is never logged


def test_a_collector_killed_before_delivery_delivers_after_restart(
        db_url: str, start: Callable[..., Server]) -> None:
    port = free_port()  # the receiver is down: nothing listens there yet
    env = alerts_env(f"http://127.0.0.1:{port}/hook")
    collector = start_server(db_url, env=env)  # not `start`'s: it must not exit 0
    try:
        assert collector.post("/ingest/errors", error("fp-crash")).status_code == 202
        # Committed, routed and tried at least once: the alert is in the outbox.
        wait_until(lambda: collector.query(
            "SELECT 1 FROM alert_deliveries WHERE attempts > 0 AND status = 'pending'"),
            "a failed attempt", collector)
    finally:
        assert collector.stop(signal.SIGKILL) == -signal.SIGKILL
    with receiving(port=port) as receiver:
        again = start(db_url, env=env)
        wait_until(receiver.accepted, "the delivery after the restart", again)
        wait_until(lambda: settled(again), "delivery", again)
        (alert,) = alerts_of(receiver)
        assert alert["kind"] == "new_group" and alert["group"]["fingerprint"] == "fp-crash"


@pytest.mark.postgres
def test_two_collectors_on_one_database_deliver_every_alert_exactly_once(
        pg_url: str, start: Callable[..., Server]) -> None:
    with receiving() as receiver:
        env = alerts_env(receiver.url, rate_per_minute="1000")
        first, second = start(pg_url, env=env), start(pg_url, env=env)
        fingerprints = [f"fp-{i}" for i in range(60)]
        for i, fingerprint in enumerate(fingerprints):
            collector = first if i % 2 else second
            assert collector.post("/ingest/errors", error(fingerprint)).status_code == 202
        wait_until(lambda: len(alerts_of(receiver)) >= len(fingerprints), "every alert",
                   first)
        wait_until(lambda: settled(first), "delivery", first)
        alerts = alerts_of(receiver)
        assert sorted(a["group"]["fingerprint"] for a in alerts) == sorted(fingerprints)
        assert len({a["id"] for a in alerts}) == len(alerts) == len(fingerprints)
        senders = {row[0] for row in first.query("SELECT count(*) FROM alert_deliveries")}
        assert senders == {len(fingerprints)}


def test_a_burst_of_a_thousand_groups_is_rate_limited_with_every_group_named(
        sqlite_url: str, start: Callable[..., Server]) -> None:
    with receiving() as receiver:
        collector = start(sqlite_url, env=alerts_env(receiver.url, rate_per_minute="10"))
        fingerprints = {f"burst-{i:04}" for i in range(1000)}
        assert collector.post("/ingest/errors/batch", {"errors": [
            error(fingerprint) for fingerprint in sorted(fingerprints)]}).status_code == 202
        wait_until(lambda: settled(collector) and collector.query(
            "SELECT 1 FROM alert_facts"), "delivery", collector)
        documents = [r.json() for r in receiver.accepted()]
        assert len(documents) <= 10  # the rate, digests included
        assert any(d["type"] == "digest" for d in documents)
        named = [d["group"]["fingerprint"] for d in documents if d["type"] == "alert"]
        for digest in (d for d in documents if d["type"] == "digest"):
            assert digest["more"] == 0
            named += [a["group"]["fingerprint"] for a in digest["alerts"]]
        assert sorted(named) == sorted(fingerprints)  # each named once


def test_ignored_groups_never_alert_and_rules_are_limited(sqlite_url: str,
                                                          start: Callable[..., Server]
                                                          ) -> None:
    rules = ("[{on: new_group, destinations: [hook], env: production, service: api}, "
             "{on: regression, destinations: [hook], project: other}]")
    with receiving() as receiver:
        collector = start(sqlite_url, env=alerts_env(receiver.url, rules))
        for sent in (error("fp-staging", environment="staging", service="api"),
                     error("fp-web", environment="production", service="web"),
                     error("fp-prod", environment="production", service="api")):
            assert collector.post("/ingest/errors", sent).status_code == 202
        wait_until(lambda: alerts_of(receiver), "the production api alert", collector)
        wait_until(lambda: settled(collector), "routing", collector)
        assert [a["group"]["fingerprint"] for a in alerts_of(receiver)] == ["fp-prod"]

        store = Store(collector.db_url)
        try:
            (project_id,) = collector.query("SELECT id FROM projects WHERE name = 'acme'")[0]
            # Resolved then reopened in acme: the regression rule is for project other.
            groups.set_status(store, project_id, "fp-prod", "resolved",
                              int(time.time() * 1e6) - 1_000_000)
        finally:
            store.dispose()
        assert collector.post("/ingest/errors", error("fp-prod", environment="production",
                                                      service="api")).status_code == 202
        wait_until(lambda: collector.query(
            "SELECT 1 FROM alert_facts WHERE kind = 'regression' AND routed_us IS NOT NULL"),
            "the regression routed", collector)
        wait_until(lambda: settled(collector), "routing", collector)
        assert len(alerts_of(receiver)) == 1


def test_a_slack_destination_gets_text_and_blocks(sqlite_url: str,
                                                  start: Callable[..., Server]) -> None:
    with receiving() as receiver:
        env = alerts_env(receiver.url, "[{on: new_group, destinations: [team]}]")
        env["SOUNDING__ALERTS__DESTINATIONS"] = (
            f"[{{name: team, type: slack, url: '{receiver.url}'}}]")
        collector = start(sqlite_url, env=env)
        assert collector.post("/ingest/errors", error("fp-slack", message="<b>&</b>")
                              ).status_code == 202
        (received,) = wait_until(receiver.accepted, "the Slack message", collector)
        message = received.json()
        assert "New error" in message["text"]
        # Client text is escaped wherever Slack reads markup (plain_text is literal).
        marked = [message["text"]] + [
            text for block in message["blocks"] for text in _mrkdwn(block)]
        assert "&lt;b&gt;&amp;&lt;/b&gt;" in message["text"]
        assert not any("<b>" in text for text in marked)
        assert signature.HEADER not in received.headers  # only webhooks are signed


def _mrkdwn(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["text"]] if node.get("type") == "mrkdwn" else []
        return found + [t for value in node.values() for t in _mrkdwn(value)]
    if isinstance(node, list):
        return [t for value in node for t in _mrkdwn(value)]
    return []


def test_an_evaluated_fact_skips_an_ignored_group(sqlite_url: str,
                                                  start: Callable[..., Server]) -> None:
    rule = {"on": "frequency", "destinations": ["hook"], "count": 1, "minutes": 1}
    with receiving() as receiver:
        collector = start(sqlite_url, env=alerts_env(
            receiver.url, "[{on: frequency, destinations: [hook], count: 1, minutes: 1}]"))
        for fingerprint in ("fp-ignored", "fp-open"):
            assert collector.post("/ingest/errors", error(fingerprint)).status_code == 202
        store = Store(collector.db_url)
        try:
            (project_id,) = collector.query("SELECT id FROM projects WHERE name = 'acme'")[0]
            groups.set_status(store, project_id, "fp-ignored", "ignored")
            key = rules.parse(rule).rule_key
            # What the frequency evaluator records, for both groups.
            for fingerprint in ("fp-ignored", "fp-open"):
                assert alerts.record_fact(store, project_id, "frequency", fingerprint,
                                          f"frequency:{key}:{fingerprint}:0",
                                          int(time.time() * 1e6), {"count": 5, "minutes": 1})
        finally:
            store.dispose()
        wait_until(receiver.accepted, "the open group's alert", collector)
        wait_until(lambda: settled(collector), "routing", collector)
        assert [a["group"]["fingerprint"] for a in alerts_of(receiver)] == ["fp-open"]


def test_an_email_destination_gets_text_and_html(sqlite_url: str,
                                                 start: Callable[..., Server]) -> None:
    with smtp.receiving() as mailbox:
        env = alerts_env("http://unused.invalid/", "[{on: new_group, destinations: [mail]}]")
        env["SOUNDING__ALERTS__DESTINATIONS"] = (
            f"[{{name: mail, type: email, host: 127.0.0.1, port: {mailbox.port}, "
            "security: none, from: sounding@example.com, to: [oncall@example.com]}]")
        collector = start(sqlite_url, env=env)
        assert collector.post("/ingest/errors", error("fp-mail", message="<script>")
                              ).status_code == 202
        (received,) = wait_until(lambda: mailbox.messages, "the email", collector)
        wait_until(lambda: settled(collector), "delivery", collector)
        assert received.rcpt_tos == ["oncall@example.com"]
        message = received.message
        assert "New error" in str(message["Subject"])
        plain = message.get_body(("plain",))
        html = message.get_body(("html",))
        assert plain is not None and html is not None
        assert "<script>" not in html.get_content()  # client text escaped in HTML
        assert "&lt;script&gt;" in html.get_content()
