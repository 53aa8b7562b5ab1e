"""A project's alert settings page (dashboard/alerts.py) on the real server: admin
only, every POST needing the session's anti-forgery token; destinations and rules
added, listed and removed; "Send a test alert" records a test fact for that one
destination; credentials never in the page, the log or the database in plain text;
a destination sealed under another `alerts.secrets_key` is told as such."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from extensions.alerts.admin import AlertsAdmin
from storage.store import Store
from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.dashboard.test_setup import logged_in, xsrf_of
from tests.extensions.alerts.test_delivery import wait_until
from tests.support.alert_receiver import receiving
from tests.support.server import Projects, Server, collectors, project_keys

KEY_A = "alerts-secrets-key-A-0123456789abcdef"
KEY_B = "alerts-secrets-key-B-0123456789abcdef"
HOOK_QUERY = "tokenQUERYSECRET42"
HOOK_URL = f"http://127.0.0.1:9/sounding/PATHSECRET17?token={HOOK_QUERY}"
HOOK_SECRET = "whsec-WEBHOOKSECRET-0123456789"
SLACK_URL = "http://127.0.0.1:9/services/T0000/B0000/SLACKPATHSECRET99"
SMTP_PASSWORD = "smtp-PASSWORD-secret-77"
FILE_SLACK = "http://127.0.0.1:9/services/T1/B1/FILEPATHSECRET55"
SECRETS = (HOOK_QUERY, "PATHSECRET17", HOOK_SECRET, "SLACKPATHSECRET99", SMTP_PASSWORD,
           "FILEPATHSECRET55")
# Everything logged: debug level and one line per request.
LOUD = {"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN, "SOUNDING_LOG_LEVEL": "debug",
        "SOUNDING_ACCESS_LOG": "true"}


def env(key: str | None = KEY_A) -> dict[str, str]:
    return {**LOUD, **({"SOUNDING__ALERTS__SECRETS_KEY": key} if key else {})}


def page_url(server: Server) -> str:
    return server.project_url("/alerts")


def post(session: requests.Session, server: Server, path: str,
         data: dict[str, Any]) -> requests.Response:
    """A form POST from the page, with the token its forms carry."""
    token = xsrf_of(session.get(page_url(server), timeout=10).text)
    return session.post(page_url(server) + path, data={**data, "_xsrf": token}, timeout=10,
                        allow_redirects=False)


def add_destinations(session: requests.Session, server: Server) -> None:
    for form in ({"name": "hook", "type": "webhook", "url": HOOK_URL, "secret": HOOK_SECRET},
                 {"name": "team-slack", "type": "slack", "url": SLACK_URL},
                 {"name": "mail", "type": "email", "host": "127.0.0.1", "port": "9",
                  "security": "starttls", "user": "alerts", "password": SMTP_PASSWORD,
                  "from": "sounding@example.com", "to": "ops@example.com, dev@example.com"}):
        added = post(session, server, "/destinations", form)
        assert added.status_code == 303, added.text
        assert added.headers["Location"].endswith("/alerts?done=destination-added")


def no_secret_in(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


@pytest.fixture(scope="module")
def alert_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[Projects]:
    """One collector per module and store (`env()`: loud, with a secrets key), handing
    each test a project of its own: destinations, rules, facts and deliveries are all a
    project's, and the tests read only theirs. Its log is every test's, so a test's
    no_secret_in(log) holds for what ran before it too."""
    with collectors(tmp_path_factory.mktemp("alerts")) as start:
        yield Projects(start(module_db_url, keys=project_keys(), env=env()))


@pytest.fixture
def dash(alert_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    return alert_projects.take()


def count(server: Server, table: str) -> int:
    """The project's rows in `table`."""
    return int(server.project_rows(table, "count(*)")[0][0])


def test_the_page_is_admin_only(dash: Server) -> None:
    anonymous = requests.get(page_url(dash), timeout=10, allow_redirects=False)
    assert anonymous.status_code == 302
    assert anonymous.headers["Location"].startswith("/login?next=")
    refused = requests.post(page_url(dash) + "/destinations", timeout=10,
                            data={"name": "x", "type": "slack", "url": SLACK_URL})
    assert refused.status_code == 401
    api_client = requests.get(page_url(dash), timeout=10,
                              headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert api_client.status_code == 200 and "Add a destination" in api_client.text
    wrong = requests.get(page_url(dash), timeout=10, allow_redirects=False,
                         headers={"Authorization": f"Bearer {dash.key}"})  # an ingest key
    assert wrong.status_code == 302
    assert count(dash, "alert_destinations") == 0


def test_a_post_without_the_sessions_token_is_refused(dash: Server) -> None:
    session = logged_in(dash)
    for path, data in (("/destinations", {"name": "x", "type": "slack", "url": SLACK_URL}),
                       ("/rules", {"on": "new_group", "destinations": "x"}),
                       ("/test", {"destination": "x"})):
        forged = session.post(page_url(dash) + path, data=data, timeout=10,
                              allow_redirects=False)
        assert forged.status_code == 403, path
        other = session.post(page_url(dash) + path, data={**data, "_xsrf": "2|00|11|22"},
                             timeout=10, allow_redirects=False)
        assert other.status_code == 403, path
    assert count(dash, "alert_destinations") == 0
    assert count(dash, "alert_rules") == 0
    assert count(dash, "alert_facts") == 0


def test_add_list_and_remove_destinations_and_rules(dash: Server) -> None:
    session = logged_in(dash)
    add_destinations(session, dash)
    page = session.get(page_url(dash) + "?done=destination-added", timeout=10).text
    assert "Destination added." in page
    for name, kind, where in (("hook", "webhook", "http://127.0.0.1/…"),
                              ("team-slack", "slack", "http://127.0.0.1/…"),
                              ("mail", "email", "127.0.0.1:9 → ops@example.com, "
                                                "dev@example.com")):
        row = re.search(rf'<tr class="destination" data-name="{name}">(.*?)</tr>', page, re.S)
        assert row is not None, name
        assert f'<td class="type">{kind}</td>' in row.group(1)
        assert where in row.group(1)
    no_secret_in(page)
    again = post(session, dash, "/destinations", {"name": "hook", "type": "slack",
                                                  "url": SLACK_URL})
    assert again.status_code == 400 and "already has &#x27;hook&#x27;" in again.text

    rule = post(session, dash, "/rules", {"on": "frequency", "destinations": "hook",
                                         "env": "production", "count": "50", "minutes": "5"})
    assert rule.status_code == 303, rule.text
    page = session.get(page_url(dash), timeout=10).text
    found = re.search(r'<tr class="rule" data-id="(\d+)">(.*?)</tr>', page, re.S)
    assert found is not None
    rule_id, row = found.groups()
    assert '<td class="on">frequency</td>' in row and '<td class="to">hook</td>' in row
    assert "production" in row and "count 50, minutes 5" in row
    stored = dash.project_rows("alert_rules", "rule")
    assert len(stored) == 1

    in_use = post(session, dash, f"/destinations/{dest_id(dash, 'hook')}/remove", {})
    assert in_use.status_code == 400
    assert f"used by rule #{rule_id}: remove the rule first" in in_use.text
    assert post(session, dash, f"/rules/{rule_id}/remove", {}).status_code == 303
    assert post(session, dash, f"/rules/{rule_id}/remove", {}).status_code == 404
    assert post(session, dash, f"/destinations/{dest_id(dash, 'hook')}/remove",
                {}).status_code == 303
    names = {row[0] for row in dash.project_rows("alert_destinations", "name")}
    assert names == {"team-slack", "mail"}
    assert 'data-name="hook"' not in session.get(page_url(dash), timeout=10).text


def dest_id(server: Server, name: str) -> int:
    return int(server.query("SELECT id FROM alert_destinations WHERE project_id = :p "
                            "AND name = :n", p=server.project_id(), n=name)[0][0])


def test_credentials_are_never_in_the_page_the_log_or_the_table(dash: Server) -> None:
    session = logged_in(dash)
    add_destinations(session, dash)
    no_secret_in(session.get(page_url(dash), timeout=10).text)
    rows = dash.project_rows("alert_destinations", "name, type, config, sealed")
    assert len(rows) == 3
    for name, _kind, config, sealed in rows:
        raw = bytes(sealed)
        no_secret_in(str(config))
        assert not any(secret.encode() in raw for secret in SECRETS), name
        assert raw[:1] == b"\x01" and len(raw) > 21 + 16  # version, key id, nonce, tag
    configs = {name: config if isinstance(config, dict) else json.loads(config)
               for name, _kind, config, _sealed in rows}
    assert configs == {  # credentials only as "set", a URL only as its host
        "hook": {"url": "http://127.0.0.1/…", "secret": "set"},
        "team-slack": {"url": "http://127.0.0.1/…"},
        "mail": {"host": "127.0.0.1", "port": 9, "security": "starttls",
                 "user": "alerts", "password": "set", "from": "sounding@example.com",
                 "to": ["ops@example.com", "dev@example.com"]}}
    no_secret_in(dash.log())
    # What the alerts extension loads opens to what was typed, spaces and all.
    spaced = "  a secret with spaces  "
    assert post(session, dash, "/destinations", {"name": "spaced", "type": "webhook",
                                                 "url": " https://h.example/in ",
                                                 "secret": spaced}).status_code == 303
    store = Store(dash.db_url)
    try:
        runtime = AlertsAdmin(store, {"secrets_key": KEY_A}).runtime()
    finally:
        store.dispose()
    pid = dash.project_id()
    opened = {d["name"]: d for d in runtime.destinations}
    assert opened[f"{pid}/spaced"] == {"name": f"{pid}/spaced", "type": "webhook",
                                       "url": "https://h.example/in", "secret": spaced}
    assert opened[f"{pid}/hook"]["url"] == HOOK_URL
    assert opened[f"{pid}/mail"]["password"] == SMTP_PASSWORD


def test_a_refused_destination_names_the_field_and_echoes_no_credential(dash: Server) -> None:
    session = logged_in(dash)
    short = post(session, dash, "/destinations",
                 {"name": "hook", "type": "webhook", "url": HOOK_URL, "secret": "too-short"})
    assert short.status_code == 400
    assert "destination.secret must be a string of at least 16 characters" in short.text
    assert HOOK_QUERY not in short.text and "PATHSECRET17" not in short.text
    assert "too-short" not in short.text
    assert 'value="hook"' in short.text  # the name is kept, the credentials are not
    bad_url = post(session, dash, "/destinations",
                   {"name": "s", "type": "slack", "url": "ftp://x/SLACKPATHSECRET99"})
    assert bad_url.status_code == 400 and "destination.url must be an http or https URL" \
        in bad_url.text
    no_secret_in(bad_url.text)
    bad_name = post(session, dash, "/destinations", {"name": "a/b", "type": "slack",
                                                     "url": SLACK_URL})
    assert bad_name.status_code == 400 and "destination.name must be" in bad_name.text
    assert count(dash, "alert_destinations") == 0
    no_secret_in(dash.log())


def test_a_refused_rule_names_the_field(dash: Server) -> None:
    session = logged_in(dash)
    add_destinations(session, dash)
    cases = [({"on": "new_group"}, "rule.destinations must name at least one"),
             ({"on": "new_group", "destinations": "nowhere"}, "no destination is named"),
             ({"on": "sometimes", "destinations": "hook"}, "rule.on must be one of"),
             ({"on": "error_rate", "destinations": "hook", "threshold": "5", "minutes": "5"},
              "rule.threshold must be a fraction between 0 and 1"),
             ({"on": "latency", "destinations": "hook", "minutes": "5"},
              "rule.p95_ms is required for a rule on latency"),
             ({"on": "frequency", "destinations": "hook", "count": "x", "minutes": "5"},
              "rule.count must be an integer")]
    for form, message in cases:
        refused = post(session, dash, "/rules", form)
        assert refused.status_code == 400, form
        assert message in refused.text, (form, refused.text)
    assert count(dash, "alert_rules") == 0
    ok = post(session, dash, "/rules", {"on": "latency", "destinations": ["hook", "mail"],
                                        "p95_ms": "750", "minutes": "10",
                                        "service": "checkout"})
    assert ok.status_code == 303
    (rule,) = [r[0] for r in dash.project_rows("alert_rules", "rule")]
    stored = rule if isinstance(rule, dict) else json.loads(rule)
    assert stored == {"on": "latency", "destinations": ["hook", "mail"], "service": "checkout",
                      "p95_ms": 750.0, "minutes": 10}


def test_send_a_test_alert_records_a_test_fact_for_that_destination(dash: Server) -> None:
    session = logged_in(dash)
    add_destinations(session, dash)
    sent = post(session, dash, "/test", {"destination": "team-slack"})
    assert sent.status_code == 303
    assert sent.headers["Location"].endswith("/alerts?done=test-sent")
    pid = dash.project_id()
    facts = dash.project_rows("alert_facts", "kind, subject, dedupe_key, details")
    assert len(facts) == 1
    kind, subject, dedupe_key, details = facts[0]
    assert (kind, subject) == ("test", f"{pid}/team-slack")
    assert re.fullmatch(r"test:[0-9a-f]{32}", dedupe_key)
    assert f'"destination": "{pid}/team-slack"' in str(details).replace("'", '"')
    assert post(session, dash, "/test", {"destination": "team-slack"}).status_code == 303
    assert count(dash, "alert_facts") == 2  # one per press
    unknown = post(session, dash, "/test", {"destination": "nowhere"})
    assert unknown.status_code == 400 and "no destination is named" in unknown.text
    page = session.get(page_url(dash), timeout=10).text
    assert page.count('<tr class="fact kind-test">') == 2


def test_without_a_secrets_key_the_page_lists_configured_destinations_only(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path) -> None:
    config = tmp_path / "sounding.yaml"
    config.write_text(f"alerts:\n  destinations:\n"
                      f"    - {{name: ops-slack, type: slack, url: '{FILE_SLACK}'}}\n")
    server = start(sqlite_url, env=env(None), config=str(config))
    session = logged_in(server)
    page = session.get(page_url(server), timeout=10).text
    assert 'id="no-secrets-key"' in page and "SOUNDING__ALERTS__SECRETS_KEY" in page
    assert 'id="add-destination"' not in page
    row = re.search(r'<tr class="destination" data-name="ops-slack">(.*?)</tr>', page, re.S)
    assert row is not None and "http://127.0.0.1/…" in row.group(1)
    assert "configuration file" in row.group(1)
    refused = post(session, server, "/destinations", {"name": "hook", "type": "slack",
                                                      "url": SLACK_URL})
    assert refused.status_code == 400 and "set alerts.secrets_key" in refused.text
    assert server.query("SELECT count(*) FROM alert_destinations")[0][0] == 0
    # A rule may send to a destination of the configuration file.
    assert post(session, server, "/rules", {"on": "regression",
                                            "destinations": "ops-slack"}).status_code == 303
    no_secret_in(page)
    no_secret_in(server.log())


def test_a_destination_sealed_under_another_key_is_said_to_be(
        start: Callable[..., Server], sqlite_url: str) -> None:
    first = start(sqlite_url, env=env(KEY_A))
    add_destinations(logged_in(first), first)
    assert first.stop() == 0
    second = start(sqlite_url, env=env(KEY_B))
    page = logged_in(second).get(page_url(second), timeout=10).text
    assert page.count("sealed under another alerts.secrets_key") == 3
    no_secret_in(page)


def test_the_latest_alerts_show_each_delivery_and_why_one_failed(dash: Server) -> None:
    session = logged_in(dash)
    with receiving() as receiver:
        receiver.answers.append((404, {}))  # the Slack receiver refuses the test alert for good
        for form in ({"name": "hook", "type": "webhook", "url": HOOK_URL,
                      "secret": HOOK_SECRET},  # refused connections: retried, pending
                     {"name": "team-slack", "type": "slack", "url": receiver.url}):
            assert post(session, dash, "/destinations", form).status_code == 303
        assert post(session, dash, "/rules", {"on": "new_group", "destinations": "hook"}
                    ).status_code == 303
        assert post(session, dash, "/test", {"destination": "team-slack"}).status_code == 303
        post_ok(dash, "/ingest/errors", error("alert-xss", message=XSS))
        wait_until(lambda: dash.query(
            "SELECT 1 FROM alert_deliveries WHERE project_id = :p AND status = 'failed' "
            "UNION ALL SELECT 1 FROM alert_deliveries WHERE project_id = :p "
            "AND destination LIKE '%/hook'", p=dash.project_id()
            ) == [(1,), (1,)], "the deliveries", dash)
    page = session.get(page_url(dash), timeout=10).text
    test_row = re.search(r'<tr class="fact kind-test">(.*?)</tr>', page, re.S)
    assert test_row is not None
    assert re.search(r"team-slack: <strong>failed</strong>.*http 404", test_row.group(1), re.S)
    group_row = re.search(r'<tr class="fact kind-new_group">(.*?)</tr>', page, re.S)
    assert group_row is not None
    assert "hook: <strong>pending</strong>" in group_row.group(1)
    assert XSS not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in group_row.group(1)
