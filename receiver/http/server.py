"""The HTTP receiver: the ingestion contract's endpoints on one Tornado server."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

from tornado.log import access_log
from tornado.web import Application, RequestHandler

from model.component import Authenticator, HealthCheck, Host, Receiver
from receiver.http.base import BaseHandler
from receiver.http.body import BodyBudget
from receiver.http.connections import BoundedHTTPServer
from receiver.http.context import ReceiverContext
from receiver.http.door import otlp_routes, signal_routes
from receiver.http.health import HealthHandler, MetricsHandler
from receiver.sentry.door import sentry_routes
from runtime.configcheck import require_bool, require_int, require_list, require_str
from runtime.factory import Factory
from runtime.listen import bind_tcp
from runtime.pipeline import Pipeline

log = logging.getLogger(__name__)

DRAIN_SECONDS = 30.0


class NotFoundHandler(BaseHandler):
    def prepare(self) -> None:
        self.send_error(404)


def ingest_routes(ctx: ReceiverContext) -> list[Any]:
    args = {"ctx": ctx}
    return [
        *signal_routes(ctx),
        *sentry_routes(ctx),
        (r"/health", HealthHandler, args),
        (r"/metrics", MetricsHandler, args),
    ]


# Configuration, owned here: the defaults and the checks of each receiver's section.

HTTP_DEFAULTS: dict[str, Any] = {
    # A receiver whose `enabled` is false is skipped.
    "enabled": True,
    "host": "0.0.0.0",
    "port": 3000,
    "max_body_bytes": 5 * 1024 * 1024,
    # Bytes held by every body being read (raw or inflated) at once, and open
    # connections; past either, 503 + Retry-After (receiver/http/body.py,
    # receiver/http/connections.py).
    "max_inflight_body_bytes": 64 * 1024 * 1024,
    "max_connections": 512,
    "cors_origins": [],
    # Several `sounding serve` processes may share the port (SO_REUSEPORT).
    "reuse_port": False,
    # True only behind a TLS-terminating proxy that every request goes through:
    # its X-Forwarded-Proto/-For are then trusted (dashboard cookies get Secure).
    "xheaders": False,
}
# The standard OTLP/HTTP port, serving /v1/traces (also on :3000 under /ingest).
# Its body and connection bounds are the ingest port's, so they cannot drift apart.
OTLP_HTTP_DEFAULTS: dict[str, Any] = {
    **{key: HTTP_DEFAULTS[key] for key in ("host", "max_body_bytes",
                                           "max_inflight_body_bytes", "max_connections",
                                           "cors_origins")},
    "enabled": False,
    "port": 4318,
}


class HttpServerReceiver(Receiver):
    """Shared lifecycle of Tornado-based receivers; subclasses give the routes and
    their defaults (filled in by the factory; here too, for a receiver built alone)."""

    defaults: dict[str, Any] = HTTP_DEFAULTS

    def __init__(self, name: str, config: dict[str, Any] | None = None, *,
                 pipeline: Pipeline, auth: Authenticator, health: HealthCheck,
                 extra_routes: list[Any] | None = None) -> None:
        super().__init__(name, {**self.defaults, **(config or {})})
        self.ctx = ReceiverContext(
            pipeline=pipeline, auth=auth, health=health,
            max_body_bytes=int(self.config["max_body_bytes"]),
            cors_origins=list(self.config["cors_origins"] or []),
            body_budget=BodyBudget(int(self.config["max_inflight_body_bytes"]), name=name),
        )
        self.max_connections = int(self.config["max_connections"])
        self.extra_routes = extra_routes or []
        self._server: BoundedHTTPServer | None = None
        self._ports: list[int] = []
        self._sockets: list[socket.socket] = []  # bound, not yet served
        self._host = str(self.config["host"])

    def routes(self) -> list[Any]:
        raise NotImplementedError

    async def bind(self) -> None:
        if self._sockets or self._server is not None:
            return
        host = str(self.config["host"])
        port = int(self.config["port"])
        # reuse_port: several collector processes share one port (SO_REUSEPORT) and
        # the kernel spreads connections over them (docs/operating.md, "Performance and
        # durability").
        self._sockets = bind_tcp(host, port, f"receivers.{self.name}.port",
                                 bool(self.config.get("reuse_port", False)))
        self._ports = sorted({s.getsockname()[1] for s in self._sockets})
        self._host = host

    async def start(self) -> None:
        if self._server is not None:
            return
        await self.bind()
        app = Application(self.routes() + self.extra_routes,
                          default_handler_class=NotFoundHandler,
                          default_handler_args={"ctx": self.ctx},
                          log_function=_log_request)
        # receiver/http/body.py enforces the limit and answers 413. Tornado's own bound sits
        # one read chunk above it, so that ours always trips first and Tornado's (which
        # answers a bare 400) only guards against a handler that stops reading.
        # xheaders: behind a trusted proxy, X-Forwarded-Proto/-For give the original
        # scheme and client (so a dashboard cookie over HTTPS is Secure). Off by
        # default: anyone reaching the port directly could forge them.
        self._server = BoundedHTTPServer(
            app, name=self.name, max_connections=self.max_connections,
            max_body_size=self.ctx.max_body_bytes + 65536, chunk_size=65536,
            idle_connection_timeout=300, xheaders=bool(self.config.get("xheaders", False)))
        sockets, self._sockets = self._sockets, []
        self._server.add_sockets(sockets)

    def addresses(self) -> list[str]:
        host = "127.0.0.1" if self._host in ("0.0.0.0", "") else self._host
        return [f"http://{host}:{port}" for port in self._ports]

    async def shutdown(self) -> None:
        sockets, self._sockets = self._sockets, []
        for sock in sockets:  # bound, never served
            sock.close()
        server, self._server = self._server, None
        if server is None:
            return
        server.stop()
        self.ctx.closing = True
        waited = 0.0
        while self.ctx.in_flight > 0 and waited < DRAIN_SECONDS:
            await asyncio.sleep(0.02)
            waited += 0.02
        await server.close_all_connections()


def _log_request(handler: RequestHandler) -> None:
    """Tornado's access log, except that a 503 is logged like a 4xx: under overload
    it is the expected answer, counted in /metrics, and must not flood the log."""
    status = handler.get_status()
    if status < 400:
        level = logging.INFO
    elif status < 500 or status == 503:
        level = logging.WARNING
    else:
        level = logging.ERROR
    # Off by default (logging.access_log): then the line is not even formatted (the
    # Sentry door's summary filters keys out of the URI with two regular expressions).
    if access_log.isEnabledFor(level):
        access_log.log(level, "%d %s %.2fms", status, handler._request_summary(),
                       1000.0 * handler.request.request_time())


class HttpReceiver(HttpServerReceiver):
    """Port 3000: /ingest/*, /health, /metrics, and the routes extensions offer (the
    dashboard, unless it has a port of its own), given as `extra_routes`."""

    def routes(self) -> list[Any]:
        return ingest_routes(self.ctx)


class OtlpHttpReceiver(HttpServerReceiver):
    """Port 4318, the standard OTLP/HTTP port: /v1/traces, so that an SDK left at its
    default endpoint works. Same handler, auth and pipeline as /ingest/v1/traces."""

    defaults = OTLP_HTTP_DEFAULTS

    def routes(self) -> list[Any]:
        return otlp_routes(self.ctx)


def check_http(path: str, config: dict[str, Any]) -> None:
    require_int(path, config, "port", 0)
    for key in ("max_body_bytes", "max_inflight_body_bytes", "max_connections"):
        require_int(path, config, key, 1)
    for key in ("enabled", "reuse_port", "xheaders"):
        require_bool(path, config, key)
    require_str(path, config, "host")
    require_list(path, config, "cors_origins")


def _dependencies(host: Host) -> dict[str, Any]:
    return {"pipeline": host.pipeline, "auth": host.authenticator(),
            "health": host.health_check()}


def _create_http(name: str, config: dict[str, Any], host: Host) -> HttpReceiver:
    return HttpReceiver(name, config, extra_routes=host.http_routes(), **_dependencies(host))


def _create_otlp_http(name: str, config: dict[str, Any], host: Host) -> OtlpHttpReceiver:
    return OtlpHttpReceiver(name, config, **_dependencies(host))


http_factory = Factory("http", "receiver", _create_http, HTTP_DEFAULTS, check_http)
otlp_http_factory = Factory("otlp_http", "receiver", _create_otlp_http, OTLP_HTTP_DEFAULTS,
                            check_http)
