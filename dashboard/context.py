"""What every dashboard handler is given by the route table."""

from __future__ import annotations

from typing import Any

from dashboard.auth import AdminAuth
from dashboard.oidc import Provider
from dashboard.oidc_settings import providers
from extensions.alerts.admin import AlertsAdmin
from model.component import PolicySource
from storage.store import Store


class DashboardContext:
    """What dashboard handlers are given: the store, the admin auth and the settings."""

    def __init__(self, store: Store, auth: AdminAuth,
                 settings: dict[str, Any] | None = None) -> None:
        self.store = store
        self.auth = auth
        self.settings = settings or {}  # the `dashboard:` section
        # The OpenID providers of `dashboard.oidc.providers`, by name, in their order.
        self.providers = {p.name: Provider(p) for p in providers(self.settings)}
        # `dashboard.sso_only`: no password logins (the admin token still works).
        self.sso_only = bool(self.settings.get("sso_only"))
        # The alerts extension's settings logic, once the service has built it
        # (dashboard/extension.py); None while it is disabled.
        self.alerts: AlertsAdmin | None = None
        # The policy extension (model.component.PolicySource), for the policy in force
        # (dashboard/policy.py); None while it is disabled.
        self.policies: PolicySource | None = None
