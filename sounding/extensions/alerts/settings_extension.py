"""A stand-in `alerts` extension: the `alerts:` section's `secrets_key` and
`destinations`, and the AlertsAdmin the dashboard's alert settings page asks for.

It exists only so that the page (branch i13-ui) runs before the real extension
(branch i13-send: sounding/extensions/alerts/extension.py, which routes, sends and
evaluates) is merged. At that merge this module goes: the real extension takes
`secrets_key` into its DEFAULTS and checks, and sets `self.admin =
AlertsAdmin(store, self.config)`, which is all the dashboard reads of it.
"""

from __future__ import annotations

from typing import Any

from sounding.component import Extension, Host
from sounding.configcheck import check_keys
from sounding.errors import ConfigError
from sounding.extensions.alerts import destinations as dest
from sounding.extensions.alerts.admin import AlertsAdmin, check_secrets_key
from sounding.extensions.storage import StorageExtension
from sounding.factory import Factory
from storage.store import Store

DEFAULTS: dict[str, Any] = {
    # The key that seals the credentials of destinations added on the dashboard
    # (32+ characters; every collector on one database needs the same). None: the
    # dashboard cannot add destinations.
    "secrets_key": None,
    "destinations": [],
}


class AlertsSettingsExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any], *, store: Store) -> None:
        super().__init__(name, config)
        self.admin = AlertsAdmin(store, self.config)

    async def start(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


def _check(path: str, config: dict[str, Any]) -> None:
    check_keys(path, {k: v for k, v in config.items() if k != "destinations"}, DEFAULTS)
    check_secrets_key(path, config)
    items = config.get("destinations") or []
    if not isinstance(items, list):
        raise ConfigError(f"{path}.destinations must be a list of destinations")
    for index, item in enumerate(items):
        dest.check(f"{path}.destinations[{index}]", item)


def _create(name: str, config: dict[str, Any], host: Host) -> AlertsSettingsExtension:
    return AlertsSettingsExtension(name, config,
                                   store=host.extension("storage", StorageExtension).store)


factory = Factory("alerts", "extension", _create, DEFAULTS, _check)
