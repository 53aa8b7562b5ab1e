"""The policy extension: each project's policy (model/policy.py: its scrubbing
settings and inbound filters), answered from memory on every request.

Configured by the top-level `policy:` section: `scrubbing`, `filters` and
`detectors` (the performance detectors' thresholds, docs/apm.md) for every project,
`projects.<name>` for one project over those, and per project on the dashboard or
the read API (stored in `project_policies`, storage/policies.py; scrubbing and
filters), over both. At each level a setting given replaces the one below, and scrubbing rules
add to those below: a project cannot drop a rule of the collector's.

The stored policies are read at start and again every `refresh_seconds`, so a
change made through any collector sharing the database takes effect within that
long everywhere; while the database cannot be read, the last policies read stay.
The `hash` action's key is the database's (storage/accounts/secrets.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from extensions.storage import StorageExtension
from model.component import Extension, Host
from model.detectors import DetectorSettings, detector_mapping, detector_settings
from model.errors import ConfigError
from model.policy import PARTS, Policy, filter_settings, layered, scrub_settings
from runtime.configcheck import require_mapping
from runtime.factory import Factory
from runtime.tasks import cancel_and_wait
from storage import policies
from storage.accounts import secrets
from storage.store import Store

log = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    # Scrubbing for every project (docs/scrubbing.md): the default rules on, e-mail
    # and IP addresses kept, no custom rules.
    "scrubbing": {"defaults": True, "emails": False, "ip_addresses": False, "rules": []},
    # Inbound filters for every project (docs/scrubbing.md#inbound-filters): all off.
    "filters": {"localhost": False, "browser_extensions": False, "legacy_browsers": False,
                "web_crawlers": False, "error_messages": [], "releases": [],
                "ip_ranges": []},
    # The performance detectors (docs/apm.md#performance-issues): Sentry's defaults.
    "detectors": detector_mapping(DetectorSettings()),
    # Per project, by name: {scrubbing: ..., filters: ..., detectors: ...} over the
    # three above.
    "projects": {},
    # How often the policies set on the dashboard or the API are read again.
    "refresh_seconds": 10,
}


def base_policy(config: dict[str, Any]) -> Policy:
    return Policy(scrub_settings(config.get("scrubbing"), "policy.scrubbing"),
                  filter_settings(config.get("filters"), "policy.filters"),
                  detectors=detector_settings(config.get("detectors"), "policy.detectors"))


class PolicyExtension(Extension):
    """Answers `policy_for` (the model.component.PolicySource contract)."""

    def __init__(self, name: str, config: dict[str, Any], *, store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        self.base = base_policy(self.config)
        self._by_id: dict[int, Policy] = {}
        self._names: dict[str, int] = {}
        self._refresher: asyncio.Task[None] | None = None

    def policy_for(self, project_id: int) -> Policy:
        return self._by_id.get(project_id, self.base)

    async def start(self) -> None:
        key = await asyncio.to_thread(secrets.ensure_scrub_hash_key, self.store)
        self.base = Policy(self.base.scrub, self.base.filters, bytes.fromhex(key),
                           self.base.detectors)
        await self.refresh()
        if self._refresher is None:
            self._refresher = asyncio.get_running_loop().create_task(self._refresh_forever())

    async def shutdown(self) -> None:
        refresher, self._refresher = self._refresher, None
        if refresher is not None:
            await cancel_and_wait([refresher])

    async def refresh(self) -> None:
        names = await asyncio.to_thread(policies.project_ids, self.store)
        stored = await asyncio.to_thread(policies.all_policies, self.store)
        self._names = names
        by_id: dict[int, Policy] = {}
        for name, raw in (self.config.get("projects") or {}).items():
            if name in names:
                by_id[names[name]] = layered(self.base, raw or {}, f"policy.projects.{name}")
        for project_id, parts in stored.items():
            below = by_id.get(project_id, self.base)
            try:
                by_id[project_id] = layered(below, parts, f"project {project_id}")
            except ValueError as exc:  # checked when stored; a row of a later version?
                log.error("the stored policy of project %d is not read: %s", project_id, exc)
        self._by_id = by_id

    async def _refresh_forever(self) -> None:
        while True:
            await asyncio.sleep(float(self.config["refresh_seconds"]))
            try:
                await self.refresh()
            except SQLAlchemyError as exc:
                log.warning("the projects' policies could not be read again: %s", exc)


def _check(path: str, config: dict[str, Any]) -> None:
    try:
        base = base_policy(config)
        for name, raw in require_mapping(f"{path}.projects", config.get("projects")).items():
            given = require_mapping(f"{path}.projects.{name}", raw)
            for key in given:
                if key not in PARTS:
                    raise ConfigError(f"{path}.projects.{name}.{key} is not a setting "
                                      f"(known: {', '.join(PARTS)})")
            layered(base, given, f"{path}.projects.{name}")
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    seconds = config.get("refresh_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
        raise ConfigError(f"{path}.refresh_seconds must be a number > 0, got {seconds!r}")


def _create(name: str, config: dict[str, Any], host: Host) -> PolicyExtension:
    return PolicyExtension(name, config,
                           store=host.extension("storage", StorageExtension).store)


factory = Factory("policy", "extension", _create, DEFAULTS, _check)
