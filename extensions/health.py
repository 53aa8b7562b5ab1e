"""The health extension: GET /health asks it, and it asks every component.

Each component reports its own health (`Component.health`, healthy by default);
the store's answer is also given as `db_ok`, the field the ingestion contract
names, so the response body stays {"status", "uptime_seconds", "db_ok"}.

It also holds the one optional token that guards GET /metrics and the details of
GET /health (`health.token`). One token rather than one per endpoint: both are read
by the same monitoring, and an operator has one secret to hand out and rotate. The
status code of /health is never guarded: a load balancer or a kubelet probe cannot
send a token, and the status alone tells nothing worth hiding.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from typing import Any

from extensions.storage import StorageExtension
from model.component import Component, Extension, Host
from model.errors import ConfigError
from runtime.factory import Factory

log = logging.getLogger(__name__)

MIN_TOKEN_LENGTH = 16

DEFAULTS: dict[str, Any] = {
    # Bearer token for GET /metrics and the details of GET /health (null: both open).
    # Also SOUNDING_HEALTH_TOKEN.
    "token": None,
}


class HealthExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any], *, host: Host) -> None:
        super().__init__(name, config)
        # Asked at each check, not at build time: the components built after this one
        # (the pipeline's stages, the receivers) are reported too.
        self._host = host
        token = config.get("token")
        # Only a digest is kept: compared in constant time whatever the lengths.
        self._token_digest = _digest(str(token)) if token else None

    @property
    def protected(self) -> bool:
        return self._token_digest is not None

    def authorized(self, token: str | None) -> bool:
        """Whether `token` (the bearer credential a request sent, or None) opens
        /metrics and /health's details: always when no token is configured."""
        if self._token_digest is None:
            return True
        return hmac.compare_digest(_digest(token or ""), self._token_digest)

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


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


async def _health_of(component: Component) -> tuple[bool, str]:
    try:
        return await component.health()
    except Exception as exc:  # noqa: BLE001 - a failing check is an unhealthy component
        return False, f"{type(exc).__name__}: {exc}"


def _check(path: str, config: dict[str, Any]) -> None:
    token = config.get("token")
    if token is None:
        return
    # The value is never echoed: it is a credential.
    if not isinstance(token, str) or len(token.strip()) < MIN_TOKEN_LENGTH:
        raise ConfigError(f"{path}.token must be a string of at least {MIN_TOKEN_LENGTH} "
                          "characters (or null: /metrics and /health's details open)")
    if any(ch.isspace() for ch in token):
        raise ConfigError(f"{path}.token must not contain spaces: it is sent as "
                          "'Authorization: Bearer <token>'")


def _create(name: str, config: dict[str, Any], host: Host) -> HealthExtension:
    return HealthExtension(name, config, host=host)


factory = Factory("health", "extension", _create, DEFAULTS, _check)
