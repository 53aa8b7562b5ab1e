"""The health extension: GET /health asks it, and it asks every component.

Each component reports its own health (`Component.health`, healthy by default);
the store's answer is also given as `db_ok`, the field the ingestion contract
names, so the response body stays {"status", "uptime_seconds", "db_ok"}.
"""

from __future__ import annotations

import logging
from typing import Any

from sounding.component import Component, Extension, Host
from sounding.extensions.storage import StorageExtension
from sounding.factory import Factory

log = logging.getLogger(__name__)


class HealthExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any], *, host: Host) -> None:
        super().__init__(name, config)
        # Asked at each check, not at build time: the components built after this one
        # (the pipeline's stages, the receivers) are reported too.
        self._host = host

    async def check(self) -> tuple[bool, dict[str, Any]]:
        healthy, db_ok = True, True
        for component in self._host.components():
            if component is self:
                continue
            ok, why = await _health_of(component)
            if isinstance(component, StorageExtension):
                db_ok = ok
            if not ok:
                healthy = False
                log.debug("%s is unhealthy: %s", component.name, why)
        return healthy, {"db_ok": db_ok}


async def _health_of(component: Component) -> tuple[bool, str]:
    try:
        return await component.health()
    except Exception as exc:  # noqa: BLE001 - a failing check is an unhealthy component
        return False, f"{type(exc).__name__}: {exc}"


def _create(name: str, config: dict[str, Any], host: Host) -> HealthExtension:
    return HealthExtension(name, config, host=host)


factory = Factory("health", "extension", _create, {})
