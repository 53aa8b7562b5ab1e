"""Every registered component: shutdown is safe without start, and safe twice
(the OpenTelemetry Collector runs the same cases over every component)."""

from __future__ import annotations

import asyncio
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from sounding import config as config_mod
from sounding.component import Component
from sounding.factory import GROUPS, DetachedHost, build
from sounding.plugins import PROCESSOR_GROUP, build_exporter, build_processor
from sounding.service import Service

PROCESSORS = sorted(e.name for e in entry_points(group=PROCESSOR_GROUP)
                    if e.name != "not_a_processor")


def _cases(component_factory) -> None:  # type: ignore[no-untyped-def]
    async def run() -> None:
        never_started: Component = component_factory()
        await never_started.shutdown()
        await never_started.shutdown()
        started: Component = component_factory()
        await started.start()
        await started.shutdown()
        await started.shutdown()

    asyncio.run(run())


@pytest.mark.parametrize("name", PROCESSORS)
def test_processor_lifecycle(name: str) -> None:
    _cases(lambda: build_processor(name, {}))


def test_sql_exporter_lifecycle(tmp_path: Path) -> None:
    from storage.store import Store

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    _cases(lambda: build_exporter("sql", {}, store=store))


def test_forward_exporter_lifecycle(tmp_path: Path) -> None:
    from storage.store import Store

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    _cases(lambda: build_exporter("forward", {"endpoint": "http://127.0.0.1:9"}, store=store))
    store.dispose()


@pytest.mark.parametrize("type_name", sorted(
    e.name for e in entry_points(group=GROUPS["extension"])))
def test_extension_lifecycle(type_name: str, tmp_path: Path) -> None:
    from sounding.extensions.storage import StorageExtension
    from storage.store import Store

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    host = DetachedHost({"storage": StorageExtension.over(store)})
    path = type_name
    _cases(lambda: build("extension", type_name, {"port": 0} if type_name == "dashboard"
                         else {}, host, path))
    store.dispose()


def test_receivers_and_whole_service_lifecycle(tmp_path: Path) -> None:
    settings = config_mod.load(environ={
        "SOUNDING_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}",
        "SOUNDING_HTTP_PORT": "0", "SOUNDING_HTTP_HOST": "127.0.0.1",
        "SOUNDING_API_KEYS": "p:k", "SOUNDING_GRPC_PORT": "0",
        "SOUNDING__RECEIVERS__OTLP_GRPC__HOST": "127.0.0.1"})

    async def run() -> None:
        unstarted = Service(settings)
        await unstarted.shutdown()
        service = Service(settings)
        await service.start()
        assert service.receivers and service.addresses()
        for receiver in service.receivers:  # each receiver alone, then the whole service
            await receiver.shutdown()
            await receiver.shutdown()
        await service.shutdown()
        await service.shutdown()

    asyncio.run(run())
