"""The service: builds the extensions and the stages from configuration, binds
every port, starts the extensions, then the stages downstream first, and stops them
in reverse."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from typing import Any, cast

from model.component import (
    Component,
    Exporter,
    Extension,
    Host,
    PolicySource,
    Processor,
    Receiver,
)
from runtime import group
from runtime.admission import Admission
from runtime.factory import build, checked_extension
from runtime.offload import DecodePool, default_workers
from runtime.pipeline import Pipeline, retry_after
from runtime.plugins import build_processor
from sounding import config as config_mod

log = logging.getLogger("sounding")

# In a serve group (sounding/group.py): the extensions its leader starts, for what
# must happen once before any worker serves (storage migrates, auth makes the
# first-run key, the dashboard the admin token; the dashboard on a port of its own
# is then served by the leader too, beside the workers; policy makes the hash key and
# answers that dashboard's policy page)...
LEADER_EXTENSIONS = ("storage", "auth", "policy", "dashboard")
# ...and those with background work that one worker does for the group (worker 0,
# started again under the same index). Both take a database lease or route in one
# transaction, so two of them overlapping while a worker restarts is safe; the other
# workers build them, unstarted, for the dashboard's alerts page.
ONCE_PER_GROUP = ("alerts", "retention", "crons")


class Service(Host):
    """The host of every component: builds them through their factories (runtime/
    factory.py), extensions first, and hands each the pipeline and the extensions
    it asks for."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.extensions: dict[str, Extension] = {}
        self._pipeline: Pipeline | None = None
        self.receivers: list[Receiver] = []
        self.first_run_key: str | None = None
        self.first_run_project_id: int | None = None
        self.first_run_admin_token: str | None = None

    # The host.

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            raise RuntimeError("the pipeline is built after the extensions")
        return self._pipeline

    def extension(self, type_name: str, contract: type[Any]) -> Any:
        return checked_extension(self.extensions, type_name, contract)

    def components(self) -> list[Component]:
        stages: list[Component] = []
        if self._pipeline is not None:
            stages = [*self._pipeline.processors, *self._pipeline.exporters]
        return [*self.extensions.values(), *stages, *self.receivers]

    def http_routes(self) -> list[Any]:
        return [route for extension in self.extensions.values()
                for route in extension.http_routes()]

    # Building.

    def _build(self) -> None:
        config = self.config
        # Built-in extensions from their top-level sections, in order (auth and the
        # dashboard ask for storage), then plugin extensions from `extensions:`.
        sections = [(name, name, config.get(name)) for name in config_mod.BUILTIN_EXTENSIONS]
        sections += [(name, f"extensions.{name}", settings)
                     for name, settings in (config.get("extensions") or {}).items()]
        for name, path, settings in sections:
            if (settings or {}).get("enabled", True) is False:
                continue
            self.extensions[name] = cast(Extension, build("extension", name, settings, self,
                                                          path))
        names = config_mod.pipeline_config(config)
        processors = [cast(Processor, build("processor", name,
                                            config["processors"].get(name), self))
                      for name in names["processors"]]
        exporters = [cast(Exporter, build("exporter", name, config["exporters"].get(name), self))
                     for name in names["exporters"]]
        service = config["service"]
        admission = Admission(
            int(service["max_requests_in_flight"]),
            float(service["max_event_loop_lag_ms"]),
            retry_after(exporters))
        policies = self.extensions.get("policy")
        self._pipeline = Pipeline(processors, exporters, self._decode_pool(names, exporters),
                                  admission,
                                  self.limiter() if "auth" in self.extensions else None,
                                  policies if isinstance(policies, PolicySource) else None)
        for name in names["receivers"]:
            settings = config["receivers"].get(name) or {}
            if settings.get("enabled", True) is False:
                continue
            self.receivers.append(cast(Receiver, build("receiver", name, settings, self)))

    def _decode_pool(self, names: dict[str, list[str]], exporters: list[Exporter]
                     ) -> DecodePool | None:
        service = self.config["service"]
        workers = service["decode_workers"]
        if workers == "auto":
            # In a group the serve workers already keep every core busy.
            workers = 0 if group.place().in_group else default_workers()
        workers = int(workers)
        if workers <= 0:
            return None
        return DecodePool(
            [(name, self.config["processors"].get(name) or {}) for name in names["processors"]],
            [exporter.preparation() for exporter in exporters],
            workers, int(service["decode_min_bytes"]),
            int(service["decode_max_bytes"]), retry_after(exporters),
            build_processor=build_processor)

    async def start(self) -> None:
        self._build()
        # Every port first (receivers, and an extension with its own, the dashboard):
        # a busy port then stops the collector before anything is created, so the
        # first-run key and admin token, printed once, are never lost to it.
        for component in [*self.receivers, *self.extensions.values()]:
            await component.bind()
        # Extensions first (storage migrates the database, auth seeds the keys), then
        # downstream first: exporters, processors, then the receivers that feed them.
        for name, extension in self.extensions.items():
            if _starts_here(name):
                await extension.start()
        self.first_run_key = getattr(self.extensions.get("auth"), "first_run_key", None)
        self.first_run_project_id = getattr(self.extensions.get("auth"),
                                            "first_run_project_id", None)
        self.first_run_admin_token = getattr(self.extensions.get("dashboard"),
                                             "first_run_admin_token", None)
        if group.place().role == group.LEADER:
            # Its exporters own the writers its workers hand their batches to; the
            # rest of the pipeline and the receivers run in the workers.
            for exporter in self.pipeline.exporters:
                await exporter.start()
            return
        await self.pipeline.start()
        for receiver in self.receivers:
            await receiver.start()

    async def shutdown(self) -> None:
        for receiver in reversed(self.receivers):
            await receiver.shutdown()
        if self._pipeline is not None:
            await self._pipeline.shutdown()
        # Storage last: every other extension may still use the store.
        for extension in reversed(list(self.extensions.values())):
            await extension.shutdown()

    def addresses(self) -> list[str]:
        return [address for receiver in self.receivers for address in receiver.addresses()]

    def dashboard_addresses(self) -> list[str]:
        """Where the dashboard listens when it has a port of its own, else []."""
        dashboard = self.extensions.get("dashboard")
        addresses = getattr(dashboard, "addresses", None)
        return list(addresses()) if callable(addresses) else []


def _starts_here(extension: str) -> bool:
    place = group.place()
    if place.role == group.LEADER:
        return extension in LEADER_EXTENSIONS
    if place.role == group.WORKER and place.index > 0:
        return extension not in ONCE_PER_GROUP
    return True


async def serve(config: dict[str, Any], announce: Callable[[Service], None]) -> None:
    """Run until SIGTERM or SIGINT, then drain and stop."""
    service = Service(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await service.start()
        announce(service)
        await stop.wait()
        log.info("stopping: draining accepted requests")
    finally:
        await service.shutdown()
    log.info("stopped")
