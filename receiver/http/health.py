"""GET /health and GET /metrics: no ingest key. Guarded by `health.token` when one
is set (the health extension holds it): /metrics answers 401 without it, /health
still answers its status code, since load balancers and probes send no token, but
its details only with it."""

from __future__ import annotations

import time
from typing import Any

from prometheus_client.exposition import choose_encoder

from model.errors import Unauthenticated
from receiver.auth import bearer_key
from receiver.http.base import BaseHandler
from runtime import telemetry


class _Guarded(BaseHandler):
    def authorized(self) -> bool:
        header = self.request.headers.get("Authorization")
        try:
            token = bearer_key(header) if header else None
        except Unauthenticated:
            return False
        return self.ctx.health.authorized(token)


class HealthHandler(_Guarded):
    """200 {"status": "ok", "uptime_seconds", "db_ok": true} while every component is
    healthy; 503 {"status": "unavailable", ...} while one is not (`db_ok` false when
    it is the store). The health extension asks the components (extensions/
    health.py). Without the token, when one is set: {"status"} alone."""

    SUPPORTED_METHODS = ("GET",)  # type: ignore[assignment]

    async def get(self) -> None:
        now = time.monotonic()
        ok, details = await self.ctx.health.check()
        if not ok:
            self.set_status(503)
        body: dict[str, Any] = {"status": "ok" if ok else "unavailable"}
        if self.authorized():
            body.update({"uptime_seconds": int(now - self.ctx.started), **details})
        self.write(body)


class MetricsHandler(_Guarded):
    """The Prometheus text format, or OpenMetrics when the scraper's Accept header
    asks for it (Prometheus does, by default)."""

    SUPPORTED_METHODS = ("GET",)  # type: ignore[assignment]

    def get(self) -> None:
        if not self.authorized():
            raise Unauthenticated("GET /metrics needs 'Authorization: Bearer <health.token>'")
        encoder, content_type = choose_encoder(self.request.headers.get("Accept", ""))
        self.set_header("Content-Type", content_type)
        self.write(encoder(telemetry.registry()))
