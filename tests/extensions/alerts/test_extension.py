"""The alerts extension in-process, over a real SQLite store and a real receiver:
the dashboard's "send a test alert", health, and the loops' stop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from extensions.alerts.extension import AlertsExtension
from extensions.storage import StorageExtension
from model.errors import ConfigError
from runtime.factory import DetachedHost, build
from storage import keys
from storage.store import Store
from tests.support.alert_receiver import receiving

SECRET = "a-secret-of-32-characters-at-least"


def _extension(store: Store, url: str) -> AlertsExtension:
    host = DetachedHost({"storage": StorageExtension.over(store)})
    extension = build("extension", "alerts", {
        "poll_s": 0.05,
        "destinations": [{"name": "hook", "type": "webhook", "url": url, "secret": SECRET},
                         {"name": "other", "type": "webhook", "url": url + "/other",
                          "secret": SECRET}],
        "rules": [{"on": "new_group", "destinations": ["other"]}]}, host, "alerts")
    assert isinstance(extension, AlertsExtension)
    return extension


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    keys.create_key(store, "acme")
    return store


def test_a_test_alert_reaches_its_destination_only(store: Store) -> None:
    async def run() -> None:
        with receiving() as receiver:
            extension = _extension(store, receiver.url)
            await extension.start()
            try:
                await extension.send_test("acme", "hook")
                deadline = time.monotonic() + 10
                while not receiver.accepted() and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                (received,) = receiver.accepted()
                document = received.json()
                assert (document["kind"], document["project"]["name"]) == ("test", "acme")
                assert received.headers.get("Sounding-Alert-Id") == document["id"]
            finally:
                await extension.shutdown()
                await extension.shutdown()  # safe twice

    asyncio.run(run())
    store.dispose()


def test_a_test_alert_to_an_unknown_destination_or_project_is_refused(store: Store) -> None:
    async def run() -> None:
        extension = _extension(store, "http://127.0.0.1:9/hook")
        with pytest.raises(ConfigError, match="no alert destination is named 'nope'"):
            await extension.send_test("acme", "nope")
        with pytest.raises(ConfigError, match="no project is named 'ghost'"):
            await extension.send_test("ghost", "hook")
        assert await extension.health() == (True, "")
        await extension.shutdown()  # never started

    asyncio.run(run())
    store.dispose()
