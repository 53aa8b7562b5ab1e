"""admin.py against a real store: what the alerts extension loads from the
dashboard's settings (credentials opened, names per project, rules limited to their
project), a destination sealed under another key left out and said, and test facts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from extensions.alerts.admin import AlertsAdmin, delivery_name
from model.errors import ConfigError
from storage import keys
from storage.alerts import outbox, settings
from storage.store import Store

KEY = "admin-test-secrets-key-0123456789abcdef"
FILE = {"name": "ops-file", "type": "slack", "url": "https://hooks.slack.com/services/FILE"}
HOOK = {"name": "hook", "type": "webhook", "url": "https://h.example/in?t=QS",
        "secret": "0123456789abcdef-secret"}


@pytest.fixture
def store(sqlite_url: str) -> Iterator[Store]:
    store = Store(sqlite_url)
    store.upgrade()
    yield store
    store.dispose()


def project(store: Store, name: str) -> int:
    with store.writer.begin() as conn:
        return keys.ensure_project(conn, name)


def test_runtime_opens_credentials_and_names_destinations_per_project(store: Store) -> None:
    admin = AlertsAdmin(store, {"secrets_key": KEY, "destinations": [FILE]})
    shop, blog = project(store, "shop"), project(store, "blog")
    admin.add_destination(shop, HOOK)
    admin.add_destination(blog, {**HOOK, "secret": "another-secret-of-blog"})
    admin.add_rule(shop, {"on": "new_group", "env": "production"}, ["hook", "ops-file"])
    runtime = admin.runtime()
    assert runtime.problems == []
    by_name = {d["name"]: d for d in runtime.destinations}
    assert by_name == {
        delivery_name(shop, "hook"): {**HOOK, "name": f"{shop}/hook"},
        delivery_name(blog, "hook"): {**HOOK, "name": f"{blog}/hook",
                                      "secret": "another-secret-of-blog"}}
    assert runtime.rules == [{"on": "new_group", "env": "production", "project": "shop",
                              "destinations": [f"{shop}/hook", "ops-file"]}]


def test_a_destination_sealed_under_another_key_is_left_out_and_said(store: Store) -> None:
    shop = project(store, "shop")
    AlertsAdmin(store, {"secrets_key": KEY}).add_destination(shop, HOOK)
    other = AlertsAdmin(store, {"secrets_key": "z" * 40})
    runtime = other.runtime()
    assert runtime.destinations == []
    assert len(runtime.problems) == 1 and "another alerts.secrets_key" in runtime.problems[0]
    assert "0123456789abcdef-secret" not in runtime.problems[0]
    (shown,) = other.overview(shop).destinations
    assert shown.problem is not None and "another alerts.secrets_key" in shown.problem
    keyless = AlertsAdmin(store, {})
    assert keyless.runtime().destinations == []
    assert not keyless.overview(shop).can_add


def test_a_sealed_value_moved_to_another_row_does_not_open(store: Store) -> None:
    shop = project(store, "shop")
    admin = AlertsAdmin(store, {"secrets_key": KEY})
    admin.add_destination(shop, HOOK)
    (row,) = settings.destinations(store, shop)
    settings.add_destination(store, shop, "copy", "webhook", row.config, row.sealed)
    problems = admin.runtime().problems
    assert len(problems) == 1 and "'copy'" in problems[0]


def test_adding_is_checked(store: Store) -> None:
    shop = project(store, "shop")
    admin = AlertsAdmin(store, {"secrets_key": KEY, "destinations": [FILE]})
    with pytest.raises(ConfigError, match="is a destination of the configuration file"):
        admin.add_destination(shop, {**HOOK, "name": "ops-file"})
    with pytest.raises(ConfigError, match="destination.secret must be"):
        admin.add_destination(shop, {**HOOK, "secret": "short"})
    with pytest.raises(ConfigError, match="set alerts.secrets_key"):
        AlertsAdmin(store, {}).add_destination(shop, HOOK)
    assert settings.destinations(store, shop) == []


def test_a_test_alert_is_a_fact_for_one_destination(store: Store) -> None:
    shop = project(store, "shop")
    admin = AlertsAdmin(store, {"secrets_key": KEY, "destinations": [FILE]})
    admin.add_destination(shop, HOOK)
    mine = admin.send_test(shop, "hook")
    configured = admin.send_test(shop, "ops-file")
    facts = {item.fact.dedupe_key: item.fact for item in outbox.recent(store, shop, 10)}
    assert facts[mine].details["destination"] == f"{shop}/hook"
    assert facts[configured].details["destination"] == "ops-file"
    assert {f.kind for f in facts.values()} == {"test"}
    with pytest.raises(ConfigError, match="no destination is named"):
        admin.send_test(shop, "nowhere")
