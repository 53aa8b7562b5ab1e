"""storage/alerts/settings.py on SQLite and PostgreSQL: destinations unique by name
per project, rules in the order added, removal scoped to the project, and every
project's settings at once."""

from __future__ import annotations

from storage import keys
from storage.alerts import settings as settings
from storage.store import Store


def projects(store: Store, *names: str) -> list[int]:
    with store.writer.begin() as conn:
        return [keys.ensure_project(conn, name) for name in names]


def test_a_destination_name_is_unique_per_project(store: Store) -> None:
    shop, blog = projects(store, "shop", "blog")
    first = settings.add_destination(store, shop, "ops", "slack", {"url": "https://h/…"},
                                     b"\x01one")
    assert first is not None
    assert settings.add_destination(store, shop, "ops", "webhook", {}, b"\x01two") is None
    assert settings.add_destination(store, blog, "ops", "webhook", {}, b"\x01three") is not None
    (ops,) = settings.destinations(store, shop)
    assert (ops.id, ops.name, ops.type, ops.config, ops.sealed) == (
        first, "ops", "slack", {"url": "https://h/…"}, b"\x01one")
    assert [d.sealed for d in settings.destinations(store, blog)] == [b"\x01three"]


def test_removal_is_scoped_to_the_project(store: Store) -> None:
    shop, blog = projects(store, "shop", "blog")
    dest = settings.add_destination(store, shop, "ops", "slack", {}, b"\x01")
    rule = settings.add_rule(store, shop, {"on": "new_group", "destinations": ["ops"]})
    assert dest is not None
    assert not settings.remove_destination(store, blog, dest)
    assert not settings.remove_rule(store, blog, rule)
    assert settings.remove_rule(store, shop, rule)
    assert settings.remove_destination(store, shop, dest)
    assert not settings.remove_destination(store, shop, dest)
    assert settings.destinations(store, shop) == [] and settings.rules(store, shop) == []


def test_all_settings_by_project(store: Store) -> None:
    shop, blog, quiet = projects(store, "shop", "blog", "quiet")
    settings.add_destination(store, shop, "b-hook", "webhook", {}, b"\x01b")
    settings.add_destination(store, shop, "a-slack", "slack", {}, b"\x01a")
    first = settings.add_rule(store, shop, {"on": "new_group", "destinations": ["a-slack"]})
    second = settings.add_rule(store, shop, {"on": "regression", "destinations": ["b-hook"]})
    settings.add_rule(store, blog, {"on": "deploy_worse", "destinations": ["ops"]})
    found = settings.all_settings(store)
    assert set(found) == {shop, blog} and quiet not in found
    assert [d.name for d in found[shop].destinations] == ["a-slack", "b-hook"]
    assert [r.id for r in found[shop].rules] == [first, second]
    assert found[blog].destinations == []
    assert found[blog].rules[0].rule == {"on": "deploy_worse", "destinations": ["ops"]}
