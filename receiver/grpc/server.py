"""The gRPC receiver (port 4317): OTLP TraceService/Export and LogsService/Export,
and Sounding's own services, every signal's method (receiver/grpc/door.py), on
grpcio's asyncio server.

The server runs on the collector's one event loop, beside Tornado, and feeds the
same pipeline with the same authentication. grpcio itself inflates gzip-compressed
calls and refuses messages above `max_message_bytes` (RESOURCE_EXHAUSTED), counted
after decompression.
"""

from __future__ import annotations

import logging
from typing import Any

import grpc

from model.component import Authenticator, Host, Receiver
from model.errors import PortUnavailable
from receiver.grpc.door import signal_services
from runtime import group, listen
from runtime.configcheck import require_bool, require_int, require_str
from runtime.factory import Factory
from runtime.listen import probe
from runtime.pipeline import Pipeline

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 5 * 1024 * 1024
# Calls already being served get this long to finish when the collector stops.
DRAIN_SECONDS = 30.0


# Configuration, owned here. OTLP over gRPC for SDKs and Collectors left at their
# defaults (TraceService and Sounding's own services, proto/sounding/v1). Set
# `enabled: false` to free the port.
DEFAULTS: dict[str, Any] = {
    "enabled": True,
    "host": "0.0.0.0",
    "port": 4317,
    "max_message_bytes": DEFAULT_MAX_MESSAGE_BYTES,
}


class GrpcReceiver(Receiver):
    def __init__(self, name: str, config: dict[str, Any] | None = None, *,
                 pipeline: Pipeline, auth: Authenticator) -> None:
        super().__init__(name, {**DEFAULTS, **(config or {})})
        self.pipeline = pipeline
        self.auth = auth
        self.host = str(self.config["host"])
        self.port = int(self.config["port"])
        self.max_message_bytes = int(self.config["max_message_bytes"])
        self._server: grpc.aio.Server | None = None
        self._bound: int | None = None
        self._unstarted: grpc.aio.Server | None = None  # bound, not yet serving

    async def bind(self) -> None:
        # grpcio binds in add_insecure_port, before the server starts serving.
        if self._unstarted is not None or self._server is not None:
            return
        setting = f"receivers.{self.name}.port"
        if group.place().role == group.LEADER:
            # The workers serve it (runtime/listen.py); the leader only holds the port.
            if self._bound is None:
                self._bound = listen.reserve(self.host, self.port, setting)
            return
        shared = listen.shared_port(setting)  # a group's worker: the leader's port
        port = self.port if shared is None else shared
        if shared is None:
            busy = probe(self.host, self.port)
            if busy is not None:
                raise PortUnavailable(self.port, setting, busy)
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.so_reuseport", 0 if shared is None else 1),
        ])
        server.add_generic_rpc_handlers(signal_services(self.pipeline, self.auth))
        host = f"[{self.host}]" if ":" in self.host else self.host
        try:
            self._bound = server.add_insecure_port(f"{host}:{port}")
        except RuntimeError as exc:
            raise PortUnavailable(self.port, setting,
                                  probe(self.host, self.port) or "cannot be bound") from exc
        self._unstarted = server

    async def start(self) -> None:
        if self._server is not None:
            return
        await self.bind()
        server, self._unstarted = self._unstarted, None
        assert server is not None
        await server.start()
        self._server = server

    def addresses(self) -> list[str]:
        if self._bound is None:
            return []
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return [f"grpc://{host}:{self._bound}"]

    async def shutdown(self) -> None:
        unstarted, self._unstarted = self._unstarted, None
        if unstarted is not None:
            # Bound, never served. grpcio lets go of the port of a server only once it
            # has started: started and stopped at once (no call in flight to wait for).
            await unstarted.start()
            await unstarted.stop(None)
        server, self._server = self._server, None
        if server is None:
            return
        # New calls are refused (UNAVAILABLE, so exporters retry elsewhere or later);
        # calls in flight finish, up to the grace period.
        await server.stop(DRAIN_SECONDS)


def _check(path: str, config: dict[str, Any]) -> None:
    require_int(path, config, "port", 0)
    require_int(path, config, "max_message_bytes", 1)
    require_bool(path, config, "enabled")
    require_str(path, config, "host")


def _create(name: str, config: dict[str, Any], host: Host) -> GrpcReceiver:
    return GrpcReceiver(name, config, pipeline=host.pipeline,
                        auth=host.authenticator())


factory = Factory("otlp_grpc", "receiver", _create, DEFAULTS, _check)
