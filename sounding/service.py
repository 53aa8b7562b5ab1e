"""The service: builds the stages from configuration, starts them downstream
first, stops them upstream first, and seeds keys."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from typing import Any

from receiver.auth import MAX_KEY_LENGTH, Authenticator
from sounding import config as config_mod
from sounding.admission import Admission
from sounding.component import Exporter, Processor, Receiver
from sounding.errors import ConfigError
from sounding.offload import DecodePool, default_workers
from sounding.pipeline import Pipeline, retry_after
from sounding.plugins import build_exporter, build_processor
from storage import keys
from storage.store import Store

log = logging.getLogger("sounding")


def _builtin_receivers() -> dict[str, Callable[..., Receiver]]:
    from receiver.http import HttpReceiver, OtlpHttpReceiver
    from receiver.otlp_grpc import GrpcReceiver

    return {"http": HttpReceiver, "otlp_http": OtlpHttpReceiver, "otlp_grpc": GrpcReceiver}


def seed_keys(store: Store, spec: str) -> list[str]:
    """Register SOUNDING_API_KEYS (`project:key,project:key`); returns the projects seeded."""
    seeded = []
    with store.writer.begin() as conn:
        for pair in (p.strip() for p in spec.split(",")):
            if not pair:
                continue
            project, sep, key = pair.partition(":")
            if not sep or not project.strip() or not key.strip():
                raise ConfigError("auth.api_keys (SOUNDING_API_KEYS) takes comma-separated "
                                  "project:key pairs")
            if len(key.strip()) > MAX_KEY_LENGTH:
                raise ConfigError(f"auth.api_keys: a key longer than {MAX_KEY_LENGTH} "
                                  "characters would never be accepted")
            try:
                keys.add_key(conn, project.strip(), key.strip())
            except ValueError as exc:
                raise ConfigError(f"auth.api_keys: {exc}") from exc
            seeded.append(project.strip())
    return seeded


class Service:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.store: Store | None = None
        self.pipeline: Pipeline | None = None
        self.receivers: list[Receiver] = []
        self.auth: Authenticator | None = None
        self.first_run_key: str | None = None
        self.dashboard: Any = None  # dashboard.app.Dashboard when enabled
        self.first_run_admin_token: str | None = None

    def _build(self) -> None:
        storage = self.config["storage"]
        self.store = Store(storage["url"], storage.get("sqlite_synchronous", "NORMAL"),
                          storage.get("sqlite_wal_max_bytes", 256 * 1024 * 1024))
        names = config_mod.pipeline_config(self.config)
        processors: list[Processor] = [
            build_processor(name, self.config["processors"].get(name))
            for name in names["processors"]]
        exporters: list[Exporter] = [
            build_exporter(name, self.config["exporters"].get(name), store=self.store)
            for name in names["exporters"]]
        service = self.config["service"]
        admission = Admission(
            int(service.get("max_requests_in_flight", 1024)),
            float(service.get("max_event_loop_lag_ms", 100)),
            retry_after(exporters))
        self.pipeline = Pipeline(processors, exporters, self._decode_pool(names, exporters),
                                 admission)
        auth = self.auth = Authenticator(self.store,
                                         float(self.config["auth"].get("cache_seconds", 10)))
        builtins = _builtin_receivers()
        for name in names["receivers"]:
            factory = builtins.get(name.split("/", 1)[0])
            if factory is None:
                raise ConfigError(f"unknown receiver type {name!r}; known: {sorted(builtins)}")
            settings = self.config["receivers"].get(name) or {}
            if settings.get("enabled", True) is False:
                continue
            self.receivers.append(factory(name, settings,
                                          pipeline=self.pipeline, auth=auth, store=self.store))
        self._mount_dashboard()

    def _decode_pool(self, names: dict[str, list[str]], exporters: list[Exporter]
                     ) -> DecodePool | None:
        service = self.config["service"]
        workers = service.get("decode_workers", "auto")
        workers = default_workers() if workers == "auto" else int(workers)
        if workers <= 0:
            return None
        return DecodePool(
            [(name, self.config["processors"].get(name) or {}) for name in names["processors"]],
            [exporter.preparation() for exporter in exporters],
            workers, int(service.get("decode_min_bytes", 16 * 1024)),
            int(service.get("decode_max_bytes", 8 * 1024 * 1024)), retry_after(exporters))

    def _mount_dashboard(self) -> None:
        settings = self.config.get("dashboard") or {}
        if not settings.get("enabled", True):
            return
        from dashboard.app import Dashboard
        from receiver.http import HttpReceiver

        assert self.store is not None
        self.dashboard = Dashboard(self.store, settings)
        for receiver in self.receivers:
            if isinstance(receiver, HttpReceiver):
                receiver.dashboard = self.dashboard

    async def start(self) -> None:
        self._build()
        assert self.store is not None and self.pipeline is not None
        store = self.store
        await asyncio.to_thread(store.upgrade)
        api_keys = str(self.config["auth"].get("api_keys") or "")
        await asyncio.to_thread(seed_keys, store, api_keys)
        if not api_keys and await asyncio.to_thread(keys.active_key_count, store) == 0:
            self.first_run_key, _ = await asyncio.to_thread(keys.create_key, store, "default")
        if self.dashboard is not None:
            self.first_run_admin_token = await asyncio.to_thread(self.dashboard.prepare)
        # Downstream first: exporters, processors, then the receivers that feed them.
        await self.pipeline.start()
        assert self.auth is not None
        await self.auth.start()  # the keys, read once the seeded and first-run ones exist
        for receiver in self.receivers:
            await receiver.start()

    async def shutdown(self) -> None:
        for receiver in reversed(self.receivers):
            await receiver.shutdown()
        if self.auth is not None:
            await self.auth.shutdown()
        if self.pipeline is not None:
            await self.pipeline.shutdown()
        if self.store is not None:
            self.store.dispose()

    def addresses(self) -> list[str]:
        return [address for receiver in self.receivers for address in receiver.addresses()]


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
