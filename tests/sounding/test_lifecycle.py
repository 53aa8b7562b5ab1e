"""Every registered component type, built-in or plugin, of every kind: shutdown is
safe without start and safe twice, and a second instance starts after the first
stopped (the OpenTelemetry Collector's generated tests run the same cases over
every component). The types come from the registry (runtime/factory.py), so a new
one is covered the day it is registered; one its defaults cannot build declares a
`sample_config` rather than being skipped."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from extensions.storage import StorageExtension
from model.component import Component, Extension
from model.errors import ConfigError, PortUnavailable
from runtime.factory import KINDS, SECTIONS, DetachedHost, build, factory_for, type_names
from runtime.pipeline import Pipeline
from sounding import config as config_mod
from sounding.service import Service
from storage.store import Store

# Registered on purpose under the wrong contract (tests/plugin_pkg): refused at build.
MISREGISTERED = {("processor", "not_a_processor")}
REGISTERED = [(kind, type_name) for kind in KINDS for type_name in type_names(kind)
              if (kind, type_name) not in MISREGISTERED]


def _cases(component_factory: Callable[[], Component]) -> None:
    async def run() -> None:
        never_started = component_factory()
        await never_started.shutdown()
        await never_started.shutdown()
        started = component_factory()
        await started.start()
        await started.shutdown()
        await started.shutdown()
        # What the first one held (a port, a file, a child process) was released.
        again = component_factory()
        await again.start()
        await again.shutdown()
        # Bound only (the service binds every port before it starts anything, and
        # stops there when one is busy), bound twice, then started on what it bound.
        bound = component_factory()
        await bound.bind()
        await bound.bind()
        await bound.shutdown()
        await bound.shutdown()
        served = component_factory()
        await served.bind()
        await served.start()
        await served.shutdown()

    asyncio.run(run())


def _config(kind: str, type_name: str) -> dict[str, Any]:
    """The type's sample configuration, listening on a free loopback port if it
    listens at all, so that tests never collide."""
    factory = factory_for(kind, type_name)
    config = factory.sample()
    if "port" in factory.defaults():
        config["port"] = 0
    if "host" in factory.defaults():
        config["host"] = "127.0.0.1"
    return config


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DetachedHost]:
    """What a service offers its components: the storage, auth and health extensions
    over a fresh SQLite file, and an empty pipeline for receivers to feed. Run in a
    temporary directory, where relative paths in sample configurations land."""
    monkeypatch.chdir(tmp_path)
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    extensions: dict[str, Extension] = {"storage": StorageExtension.over(store)}
    bootstrap = DetachedHost(extensions)
    for type_name in ("auth", "health"):
        extensions[type_name] = build("extension", type_name, {}, bootstrap, type_name)
    yield DetachedHost(extensions, pipeline=Pipeline([], []))
    store.dispose()


@pytest.mark.parametrize(("kind", "type_name"), REGISTERED,
                         ids=[f"{kind}-{type_name}" for kind, type_name in REGISTERED])
def test_lifecycle(kind: str, type_name: str, host: DetachedHost) -> None:
    config = _config(kind, type_name)
    path = f"{SECTIONS[kind]}.{type_name}"
    try:
        build(kind, type_name, config, host, path)
    except ConfigError as exc:
        pytest.fail(f"the {kind} type {type_name!r} cannot be built from its defaults; "
                    f"declare a sample_config in its factory: {exc}")
    _cases(lambda: build(kind, type_name, config, host, path))


def test_every_kind_has_registered_types_to_cycle() -> None:
    """The parametrisation above reads the registry: an empty kind would pass vacuously."""
    assert {kind for kind, _ in REGISTERED} == set(KINDS)
    # The test plugin's exporters are there too: third-party types are not left out.
    assert {("exporter", "collect"), ("exporter", "collect_prepared")} <= set(REGISTERED)


@pytest.mark.parametrize(("kind", "type_name"), sorted(MISREGISTERED))
def test_a_misregistered_type_is_refused_not_skipped(kind: str, type_name: str,
                                                     host: DetachedHost) -> None:
    with pytest.raises(ConfigError, match="not a subclass"):
        build(kind, type_name, {}, host)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(("kind", "type_name", "path"), [
    ("receiver", "http", "receivers.http.port"),
    ("receiver", "otlp_grpc", "receivers.otlp_grpc.port"),
    ("extension", "dashboard", "dashboard.port")])
def test_a_bound_port_is_held_until_shutdown_and_then_released(
        kind: str, type_name: str, path: str, host: DetachedHost) -> None:
    port = _free_port()
    config = {**_config(kind, type_name), "port": port}

    async def run() -> None:
        first = build(kind, type_name, config, host, path.rpartition(".")[0])
        await first.bind()
        second = build(kind, type_name, config, host, path.rpartition(".")[0])
        with pytest.raises(PortUnavailable) as raised:
            await second.bind()
        assert (raised.value.port, raised.value.setting) == (port, path)
        await second.shutdown()
        await first.shutdown()  # never started: the port is let go all the same
        await second.bind()
        await second.start()
        await second.shutdown()

    asyncio.run(run())


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
