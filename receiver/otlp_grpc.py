"""The gRPC receiver (port 4317): OTLP TraceService/Export and Sounding's own
services, every signal's method (receiver/grpc_ingest.py), on grpcio's asyncio server.

The server runs on the collector's one event loop, beside Tornado, and feeds the
same pipeline with the same authentication. grpcio itself inflates gzip-compressed
calls and refuses messages above `max_message_bytes` (RESOURCE_EXHAUSTED), counted
after decompression.
"""

from __future__ import annotations

import logging
from typing import Any

import grpc

from receiver.auth import Authenticator
from receiver.grpc_ingest import signal_services
from sounding.component import Receiver
from sounding.errors import ConfigError
from sounding.pipeline import Pipeline
from storage.store import Store

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 5 * 1024 * 1024
# Calls already being served get this long to finish when the collector stops.
DRAIN_SECONDS = 30.0


class GrpcReceiver(Receiver):
    default_port = 4317

    def __init__(self, name: str, config: dict[str, Any] | None = None, *,
                 pipeline: Pipeline, auth: Authenticator, store: Store) -> None:
        super().__init__(name, config)
        self.pipeline = pipeline
        self.auth = auth
        self.host = str(self.config.get("host", "0.0.0.0"))
        self.port = int(self.config.get("port", self.default_port))
        self.max_message_bytes = int(self.config.get("max_message_bytes",
                                                     DEFAULT_MAX_MESSAGE_BYTES))
        self._server: grpc.aio.Server | None = None
        self._bound: int | None = None

    async def start(self) -> None:
        if self._server is not None:
            return
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", self.max_message_bytes),
            ("grpc.so_reuseport", 0),
        ])
        server.add_generic_rpc_handlers(signal_services(self.pipeline, self.auth))
        host = f"[{self.host}]" if ":" in self.host else self.host
        try:
            self._bound = server.add_insecure_port(f"{host}:{self.port}")
        except RuntimeError as exc:
            raise ConfigError(f"receivers.{self.name}: cannot listen on {host}:{self.port} "
                              f"for gRPC: {exc}") from exc
        await server.start()
        self._server = server

    def addresses(self) -> list[str]:
        if self._bound is None:
            return []
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return [f"grpc://{host}:{self._bound}"]

    async def shutdown(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        # New calls are refused (UNAVAILABLE, so exporters retry elsewhere or later);
        # calls in flight finish, up to the grace period.
        await server.stop(DRAIN_SECONDS)
