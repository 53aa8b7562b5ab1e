"""GET /health and GET /metrics: no authentication."""

from __future__ import annotations

import asyncio
import time

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from receiver.handlers import BaseHandler

# A ping is cheap but not free; under a flood of health checks, reuse a recent one.
PING_TTL = 1.0


class HealthHandler(BaseHandler):
    """200 {"status": "ok", "uptime_seconds", "db_ok": true} while the store answers;
    503 {"status": "unavailable", ..., "db_ok": false} while it does not."""

    SUPPORTED_METHODS = ("GET",)  # type: ignore[assignment]
    _last_ping: tuple[float, bool] = (0.0, True)

    async def get(self) -> None:
        now = time.monotonic()
        checked_at, ok = HealthHandler._last_ping
        if now - checked_at > PING_TTL:
            ok = await asyncio.to_thread(self.ctx.store.ping)
            HealthHandler._last_ping = (time.monotonic(), ok)
        if not ok:
            self.set_status(503)
        self.write({
            "status": "ok" if ok else "unavailable",
            "uptime_seconds": int(now - self.ctx.started),
            "db_ok": ok,
        })


class MetricsHandler(BaseHandler):
    SUPPORTED_METHODS = ("GET",)  # type: ignore[assignment]

    def get(self) -> None:
        self.set_header("Content-Type", CONTENT_TYPE_LATEST)
        self.write(generate_latest())
