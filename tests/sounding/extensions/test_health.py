"""The health extension asks every component, and gives the store's answer as db_ok."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sounding.component import Component
from sounding.extensions.health import HealthExtension
from sounding.extensions.storage import StorageExtension
from sounding.factory import DetachedHost
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
