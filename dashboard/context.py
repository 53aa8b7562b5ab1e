"""What every dashboard handler is given by the route table."""

from __future__ import annotations

from typing import Any

from dashboard.auth import AdminAuth
from extensions.alerts.admin import AlertsAdmin
from storage.store import Store


class DashboardContext:
    """What dashboard handlers are given: the store, the admin auth and the settings."""

    def __init__(self, store: Store, auth: AdminAuth,
                 settings: dict[str, Any] | None = None) -> None:
        self.store = store
        self.auth = auth
        self.settings = settings or {}  # the `dashboard:` section
        # The alerts extension's settings logic, once the service has built it
        # (dashboard/extension.py); None while it is disabled.
        self.alerts: AlertsAdmin | None = None
