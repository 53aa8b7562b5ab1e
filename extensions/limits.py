"""Limits per project, as the auth extension keeps them (it owns them: a key names the
project, the project's limits say how much it may send; docs/limits.md).

- The limits: the configuration's (`auth.limits.default` for every project,
  `auth.limits.projects.<name>` for one), with those set on a project's Limits page or
  through the API laid over them category by category (storage/limits/settings.py),
  read again every `refresh_seconds`, so that a change made on any collector applies
  on every one within that; a lookup is a dict's.
- The lender (runtime/ratelimit.py): the buckets in memory when this process is the
  only one that can serve the database (SQLite, one process), else shared in the
  database (storage/limits/leases.py: PostgreSQL, or a serve group), so that a limit is
  the project's total.
- Usage (runtime/usage.py): written every `usage_flush_seconds`, in one transaction,
  and at shutdown; counts a flush could not write are kept for the next.
- Spike protection: every `spike_check_seconds`, the collector holding the lease
  compares each protected project's records offered since its last look with the
  project's baseline (its accepted records per second over the day before, from
  usage_hourly, at least `spike_min_rate`); over `multiple` times it, the category is
  capped at that rate until what it offers falls back under the cap. The state is
  stored (`spike_protection`), so every collector applies the cap at its next
  refresh, and each start and stop is an alert fact (`spike_protection`), routed by
  the alert rules through the outbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Mapping
from typing import Any

from model import limits as lim
from model.errors import ConfigError, RateLimited
from model.limits import Grant, Limit, Limits
from runtime import group, usage
from runtime.ratelimit import Limiter, LocalLender
from storage.alerts import outbox
from storage.limits import leases, settings
from storage.limits import usage as usage_store
from storage.retention import leases as work_leases
from storage.store import Store

log = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    # {category: {rate, burst, quota, period}} for every project (none: unlimited).
    "default": {},
    # {project name: {category: {...}}}, laid over `default` for that project.
    "projects": {},
    # Share the buckets through the database: "auto" (on PostgreSQL or in a serve
    # group, where other processes serve the same projects), true or false.
    "shared": "auto",
    # A process takes this many seconds of a rate at a time from a shared bucket...
    "slice_seconds": 0.1,
    # ...and throws away what it has not spent this long after.
    "lease_seconds": 2.0,
    # How often the limits set on the dashboard are read again.
    "refresh_seconds": 5.0,
    # How often usage counts are written to the database.
    "usage_flush_seconds": 5.0,
    # How often spike protection looks at the protected projects' volume.
    "spike_check_seconds": 60.0,
    # The least baseline, records a second: a quiet project's first burst is no spike.
    "spike_min_rate": 1.0,
}


def check(path: str, config: Any) -> None:
    """ConfigError naming the bad key of `auth.limits`."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"{path} must be a mapping")
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; "
                          f"the keys are {', '.join(DEFAULTS)}")
    try:
        lim.parse_limits(f"{path}.default", config.get("default"))
        projects = config.get("projects") or {}
        if not isinstance(projects, Mapping):
            raise ValueError(f"{path}.projects must map project names to limits")
        for name, limits in projects.items():
            lim.parse_limits(f"{path}.projects.{name}", limits)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    if config.get("shared") not in ("auto", True, False):
        raise ConfigError(f"{path}.shared must be auto, true or false")
    for key in ("slice_seconds", "lease_seconds", "refresh_seconds", "usage_flush_seconds",
                "spike_check_seconds", "spike_min_rate"):
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{path}.{key} must be a number > 0, got {value!r}")


class SharedLender:
    """The buckets in the database, lent from in a thread."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def lend(self, project_id: int, category: str, limit: Limit, want: float,
                   need: float) -> Grant:
        return await asyncio.to_thread(leases.lend, self.store, project_id, category, limit,
                                       want, need)


class ProjectLimits:
    """The limits of every project in memory, the limiter over them, and the usage
    flusher."""

    def __init__(self, store: Store, config: Mapping[str, Any]) -> None:
        self.store = store
        self.config = {**DEFAULTS, **config}
        self.default: dict[str, Limit] = lim.parse_limits("default", self.config["default"])
        self.by_name = {str(name): lim.parse_limits(str(name), limits)
                        for name, limits in (self.config["projects"] or {}).items()}
        self._limits: dict[int, dict[str, Limit]] = {}  # projects other than `default`
        shared = self.config["shared"]
        if shared == "auto":
            shared = store.dialect == "postgresql" or group.place().in_group
        self.shared = bool(shared)
        self.limiter = Limiter(SharedLender(store) if self.shared else LocalLender(),
                               self.limits_of,
                               float(self.config["slice_seconds"]) if self.shared else 0.0,
                               float(self.config["lease_seconds"]))
        self._tasks: list[asyncio.Task[None]] = []
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        # (project, category): (hour, records offered in it, monotonic time) at the
        # last look, for the rate since.
        self._offered: dict[tuple[int, str], tuple[int, int, float]] = {}

    def limits_of(self, project_id: int) -> Limits:
        found = self._limits.get(project_id)
        return self.default if found is None else found

    async def start(self) -> None:
        if self._tasks:
            return
        await self.refresh()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._every(float(self.config["refresh_seconds"]),
                                                    self.refresh), name="limits refresh"),
                       loop.create_task(self._every(float(self.config["usage_flush_seconds"]),
                                                    self.flush), name="usage flush"),
                       loop.create_task(self._every(float(self.config["spike_check_seconds"]),
                                                    self.check_spikes), name="spike protection")]

    async def shutdown(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if tasks:
            await self.flush()  # the last counts are written, not lost

    @staticmethod
    async def _every(seconds: float, work: Any) -> None:
        while True:
            await asyncio.sleep(seconds)
            await work()

    async def refresh(self) -> None:
        """Read the limits set per project again (and the project names the
        configuration's limits are given by)."""
        try:
            stored = await asyncio.to_thread(settings.all_limits, self.store)
            spikes = await asyncio.to_thread(settings.spike_settings, self.store)
            names = (await asyncio.to_thread(settings.project_names, self.store)
                     if self.by_name else {})
        except Exception as exc:  # noqa: BLE001 - the store is away: keep the last read
            log.error("cannot read the projects' limits; keeping the last read: %s",
                      type(exc).__name__)
            return
        merged: dict[int, dict[str, Limit]] = {}
        for name, limits in self.by_name.items():
            if name in names:
                merged[names[name]] = {**self.default, **limits}
        for project_id, limits in stored.items():
            merged[project_id] = {**merged.get(project_id, self.default), **limits}
        for project_id, (multiple, active, cap, category) in spikes.items():
            if multiple > 0 and active and category in lim.CATEGORIES:
                # The cap, or the project's own limit if lower.
                limits = dict(merged.get(project_id, self.default))
                own = limits.get(category)
                rate = cap if own is None or own.rate <= 0 else min(own.rate, cap)
                limits[category] = Limit(rate, max(rate, 1.0),
                                         own.quota if own else 0, own.period if own else "day")
                merged[project_id] = limits
        self._limits = merged

    async def check_spikes(self) -> None:
        try:
            await asyncio.to_thread(self._check_spikes)
        except Exception as exc:  # noqa: BLE001 - the store is away: the next look tries
            log.error("spike protection: cannot look at the projects' volume: %s",
                      type(exc).__name__)
        else:
            await self.refresh()  # a cap started or stopped here applies at once

    def _check_spikes(self) -> None:
        """One look, by the collector holding the lease (blocking, in a thread)."""
        protected = {p: s for p, s in settings.spike_settings(self.store).items() if s[0] > 0}
        now = time.time()
        ttl_us = int(2 * float(self.config["spike_check_seconds"]) * 1e6)
        if not protected or not work_leases.take(self.store, "spike_protection", self.holder,
                                                 int(now * 1e6), ttl_us):
            return
        hour = int(now) // 3600 * 3600
        for project_id, (multiple, active, cap, capped) in protected.items():
            offered, baseline = usage_store.volumes(self.store, project_id, hour)
            for category in lim.CATEGORIES:
                if category == lim.BYTES:
                    continue
                rate = self._rate(project_id, category, hour, offered.get(category, 0))
                if rate is None:
                    continue
                floor = max(baseline.get(category, 0.0),
                            float(self.config["spike_min_rate"]))
                if not active and rate > multiple * floor:
                    active, cap, capped = True, multiple * floor, category
                    settings.set_spike_state(self.store, project_id, True, cap, category)
                    self._fact(project_id, "started", category, rate, floor, multiple, cap)
                elif active and category == capped and rate < cap:
                    active = False
                    settings.set_spike_state(self.store, project_id, False, 0.0, "")
                    self._fact(project_id, "stopped", category, rate, floor, multiple, cap)

    def _rate(self, project_id: int, category: str, hour: int, offered: int) -> float | None:
        """Records a second offered since the last look (None at the first look)."""
        now = time.monotonic()
        last = self._offered.get((project_id, category))
        self._offered[(project_id, category)] = (hour, offered, now)
        if last is None or now <= last[2]:
            return None
        since = offered - last[1] if last[0] == hour else offered
        return max(0, since) / (now - last[2])

    def _fact(self, project_id: int, state: str, category: str, rate: float,
              baseline: float, multiple: float, cap: float) -> None:
        now_us = int(time.time() * 1e6)
        outbox.record_fact(self.store, project_id, "spike_protection", category,
                           f"spike:{category}:{state}:{now_us}", now_us,
                           {"state": state, "category": category, "rate": round(rate, 2),
                            "baseline": round(baseline, 3), "multiple": multiple,
                            "cap": round(cap, 2)})
        log.warning("spike protection %s for project %d, %s: %.1f records/s (cap %.1f/s)",
                    state, project_id, category, rate, cap)

    async def flush(self) -> None:
        counted = usage.drain()
        if not counted:
            return
        try:
            await asyncio.to_thread(usage_store.add, self.store, counted)
        except Exception as exc:  # noqa: BLE001 - the store is away: the next flush tries
            log.error("cannot write usage counts; kept for the next flush: %s",
                      type(exc).__name__)
            usage.merge(counted.items())

    # What the doors ask (model.component.Limiter), through the auth extension.

    def closed(self, project_id: int, categories: tuple[str, ...]) -> RateLimited | None:
        return self.limiter.closed(project_id, categories)

    async def take(self, project_id: int, counts: Mapping[str, int]) -> None:
        await self.limiter.take(project_id, counts)
