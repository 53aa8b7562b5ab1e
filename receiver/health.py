"""GET /health and GET /metrics: no authentication."""

from __future__ import annotations

import time

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from receiver.handlers import BaseHandler


class HealthHandler(BaseHandler):
    """200 {"status": "ok", "uptime_seconds", "db_ok": true} while every component is
    healthy; 503 {"status": "unavailable", ...} while one is not (`db_ok` false when
    it is the store). The health extension asks the components (sounding/extensions/
    health.py)."""

    SUPPORTED_METHODS = ("GET",)  # type: ignore[assignment]

    async def get(self) -> None:
        now = time.monotonic()
        ok, details = await self.ctx.health.check()
        if not ok:
            self.set_status(503)
        self.write({
            "status": "ok" if ok else "unavailable",
            "uptime_seconds": int(now - self.ctx.started),
            **details,
        })


class MetricsHandler(BaseHandler):
    SUPPORTED_METHODS = ("GET",)  # type: ignore[assignment]

    def get(self) -> None:
        self.set_header("Content-Type", CONTENT_TYPE_LATEST)
        self.write(generate_latest())
