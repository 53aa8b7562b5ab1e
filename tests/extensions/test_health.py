"""The health extension asks every component, and gives the store's answer as db_ok."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from extensions.health import HealthExtension, factory
from extensions.storage import StorageExtension
from model.component import Component
from model.errors import ConfigError
from runtime.factory import DetachedHost
from storage.store import Store


class Ailing(Component):
    """A component that reports itself unhealthy, or fails while checking."""

    def __init__(self, name: str, fail: bool = False) -> None:
        super().__init__(name)
        self.fail = fail

    async def health(self) -> tuple[bool, str]:
        if self.fail:
            raise RuntimeError("cannot tell")
        return False, "the disk is full"


class Components(DetachedHost):
    def __init__(self, components: list[Component]) -> None:
        super().__init__()
        self._components = components

    def components(self) -> list[Component]:
        return self._components


def test_every_component_is_asked_and_the_store_gives_db_ok(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    storage = StorageExtension.over(store)
    everyone: list[Component] = [storage]
    health = HealthExtension("health", {}, host=Components(everyone))
    everyone.append(health)
    assert asyncio.run(health.check()) == (True, {"db_ok": True})
    everyone.append(Ailing("ailing"))
    assert asyncio.run(health.check()) == (False, {"db_ok": True})
    everyone[-1] = Ailing("failing", fail=True)
    assert asyncio.run(health.check()) == (False, {"db_ok": True})
    store.dispose()


def test_a_store_that_does_not_answer_is_db_ok_false() -> None:
    # Nothing listens on port 1: every connection is refused at once.
    store = Store("postgresql://sounding@127.0.0.1:1/sounding")
    health = HealthExtension("health", {}, host=Components([StorageExtension.over(store)]))
    assert asyncio.run(health.check()) == (False, {"db_ok": False})
    store.dispose()


def test_without_a_token_everyone_is_authorized_with_one_only_its_bearer() -> None:
    open_health = HealthExtension("health", {"token": None}, host=Components([]))
    assert not open_health.protected
    assert open_health.authorized(None) and open_health.authorized("anything")
    token = "a-token-of-24-characters"
    guarded = HealthExtension("health", {"token": token}, host=Components([]))
    assert guarded.protected
    assert guarded.authorized(token)
    for wrong in (None, "", token[:-1], token + "x", token.upper(), "é" * 24):
        assert not guarded.authorized(wrong), wrong


@pytest.mark.parametrize("token, why", [
    (123456789012345678, "at least 16 characters"),
    ("too-short", "at least 16 characters"),
    ("a token with spaces inside", "must not contain spaces"),
])
def test_a_bad_token_is_refused_without_echoing_it(token: object, why: str) -> None:
    config = factory.complete({"token": token}, "health")
    with pytest.raises(ConfigError) as refused:
        factory.validate("health", config)
    assert why in str(refused.value) and "health.token" in str(refused.value)
    assert str(token) not in str(refused.value)


def test_an_unknown_health_setting_names_the_nearest() -> None:
    with pytest.raises(ConfigError, match="did you mean token"):
        factory.validate("health", {"tokn": "x" * 20})
