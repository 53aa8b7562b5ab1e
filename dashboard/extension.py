"""The dashboard as an extension: on the ingest HTTP receiver's port by default
(its routes offered through `http_routes`), on a port of its own with
`dashboard.port`, or not built at all with `dashboard.enabled: false` (a lean
sidecar). Configured by the top-level `dashboard:` section.

This module is what the entry point loads even when the dashboard is off (the
configuration's defaults come from its factory), so it imports the dashboard itself
(its pages, queries and templates, and the alerts page's cryptography) only when one
is built: a sidecar with `dashboard.enabled: false` keeps about 10 MB less."""

from __future__ import annotations

import asyncio
import re
import socket
from typing import TYPE_CHECKING, Any

from tornado.httpserver import HTTPServer
from tornado.web import Application

from dashboard import oidc_settings
from extensions.storage import StorageExtension
from model.component import Extension, Host, PolicySource
from model.errors import ConfigError
from runtime.configcheck import require_bool, require_int, require_str
from runtime.factory import Factory
from runtime.listen import bind_tcp
from storage.store import Store

if TYPE_CHECKING:
    from extensions.alerts.admin import AlertsAdmin

PUBLIC_URL = re.compile(r"https?://[^/\s@?#]+/?")

DEFAULTS: dict[str, Any] = {
    # False: the dashboard and its read API are not built (a sidecar that forwards).
    "enabled": True,
    # None: served by the HTTP receiver on its port, beside /ingest. A port: served
    # alone on it (0 picks a free one), and not on the receiver's port.
    "port": None,
    "host": "0.0.0.0",
    # With its own port: trust X-Forwarded-Proto/-For, as receivers.http.xheaders.
    "xheaders": False,
    # The admin token that logs in; when unset, one is generated on first run,
    # printed once and kept only as a hash in the database.
    "admin_token": None,
    # The key that signs session cookies; when unset, one is generated and kept in
    # the database, shared by every collector using it.
    "cookie_secret": None,
    "session_days": 7,
    # Single sign-on (dashboard/sso.py): OpenID Connect providers, each a button on
    # the login page (keys and defaults: dashboard/oidc_settings.py).
    "oidc": {"providers": []},
    # True: no password logins, only the providers' (and the admin token, the
    # break-glass login). Needs at least one provider.
    "sso_only": False,
    # Where SDKs reach the ingest listener (scheme://host[:port]), for the DSN the
    # setup page shows; None: the scheme and Host of the dashboard's own request.
    "public_url": None,
}


class DashboardExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any], *, store: Store,
                 host: Host | None = None) -> None:
        super().__init__(name, config)
        from dashboard.app import Dashboard  # here: see the module's docstring

        self.dashboard = Dashboard(store, self.config)
        # Asked at start, not here: the alerts extension is built after this one.
        self._host = host
        self.port: int | None = self.config.get("port")
        # Generated at start on a database without one; printed once by the CLI.
        self.first_run_admin_token: str | None = None
        self._prepared = False
        self._server: HTTPServer | None = None
        self._bound: list[int] = []
        self._sockets: list[socket.socket] = []  # bound, not yet served

    def http_routes(self) -> list[Any]:
        return self.dashboard.routes() if self.port is None else []

    async def bind(self) -> None:
        """Its own port, taken before any extension starts (and so before the
        first-run admin token is made)."""
        if self.port is None or self._sockets or self._server is not None:
            return
        self._sockets = bind_tcp(str(self.config["host"]), self.port, "dashboard.port")
        self._bound = sorted({s.getsockname()[1] for s in self._sockets})

    async def start(self) -> None:
        await self.bind()  # first: a busy port must not cost the admin token printed once
        if not self._prepared:
            self.first_run_admin_token = await asyncio.to_thread(self.dashboard.prepare)
            self._prepared = True
        if self._host is not None and self.dashboard.context.alerts is None:
            self.dashboard.context.alerts = alerts_admin(self._host)
            self.dashboard.context.policies = policy_source(self._host)
        if self.port is None or self._server is not None:
            return
        # Its forms are a few hundred bytes: a megabyte bounds what a client can make
        # the server hold, as receivers.http's max_body_bytes does on the ingest port.
        self._server = HTTPServer(Application(self.dashboard.routes()),
                                  xheaders=bool(self.config["xheaders"]),
                                  max_body_size=1024 * 1024, idle_connection_timeout=300)
        sockets, self._sockets = self._sockets, []
        self._server.add_sockets(sockets)

    def addresses(self) -> list[str]:
        """Where the dashboard listens on its own port, once started; [] on the
        receiver's port."""
        host = str(self.config["host"])
        host = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return [f"http://{host}:{port}" for port in self._bound]

    async def shutdown(self) -> None:
        sockets, self._sockets = self._sockets, []
        for sock in sockets:  # bound, never served
            sock.close()
        server, self._server = self._server, None
        if server is not None:
            server.stop()
            await server.close_all_connections()


def policy_source(host: Host) -> PolicySource | None:
    """The policy extension, for the policy in force; None when it is disabled."""
    try:
        return host.extension("policy", PolicySource)  # type: ignore[type-abstract]
    except ConfigError:
        return None


def alerts_admin(host: Host) -> AlertsAdmin | None:
    """The alerts extension's settings logic for the alerts page; None when the
    extension is disabled."""
    from extensions.alerts.admin import AlertsAdmin  # here: see the docstring

    try:
        extension = host.extension("alerts", Extension)
    except ConfigError:
        return None
    admin = getattr(extension, "admin", None)
    return admin if isinstance(admin, AlertsAdmin) else None


def _check(path: str, config: dict[str, Any]) -> None:
    for key in ("admin_token", "cookie_secret"):
        value = config.get(key)
        # A guessable token would open every project's data: insist on some length.
        if value is not None and (not isinstance(value, str) or len(value) < 16):
            raise ConfigError(f"{path}.{key} must be a string of at least 16 characters")
    require_bool(path, config, "enabled")
    require_bool(path, config, "xheaders")
    require_bool(path, config, "sso_only")
    oidc_settings.check(f"{path}.oidc", config.get("oidc"))
    if config.get("sso_only") and not oidc_settings.providers(config):
        raise ConfigError(f"{path}.sso_only needs at least one {path}.oidc.providers entry: "
                          "nobody but the admin token could log in")
    require_int(path, config, "session_days", 1)
    require_int(path, config, "port", 0)
    require_str(path, config, "host")
    public = config.get("public_url")
    if public is not None and (not isinstance(public, str)
                               or not PUBLIC_URL.fullmatch(public)):
        raise ConfigError(f"{path}.public_url must be http(s)://host[:port], as SDKs reach "
                          "the ingest listener (no path, user or query)")


def _create(name: str, config: dict[str, Any], host: Host) -> DashboardExtension:
    return DashboardExtension(name, config,
                              store=host.extension("storage", StorageExtension).store,
                              host=host)


factory = Factory("dashboard", "extension", _create, DEFAULTS, _check)
