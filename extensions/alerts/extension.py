"""The alerts extension: configured by the top-level `alerts:` section, it routes
the facts the store records (router.py), sends the deliveries (sender.py), runs
the evaluators that record facts from rollups and deploys (evaluate.py) and
deletes what is past `keep_days`.

Routing and sending never hold the event loop or the ingest path: every store call
runs in a thread, and the writer only inserts a fact row in the commit it makes
anyway. Every loop survives the store being away (it logs, waits and tries
again); start and shutdown are safe in any order, shutdown without start too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from extensions.alerts import config as alerts_config
from extensions.alerts import destinations as destinations_mod
from extensions.alerts import rules as rules_mod
from extensions.alerts.admin import AlertsAdmin
from extensions.alerts.evaluate import Evaluator as RuleEvaluator
from extensions.alerts.router import TEST, Router
from extensions.alerts.sender import Sender, Settings
from extensions.storage import StorageExtension
from model.component import Extension, Host
from model.errors import ConfigError
from model.timeutil import now_us
from runtime.factory import Factory
from runtime.retry import Backoff
from runtime.tasks import cancel_and_wait, woken
from storage import keys
from storage.alerts import lookup, outbox
from storage.store import Store

log = logging.getLogger(__name__)

ROUTE_BATCH = 100  # facts per routing transaction: short transactions, looped
PURGE_EVERY_S = 3600.0
HEALTH_EVERY_S = 30.0
# How often the dashboard's destinations and rules are read again (any collector of
# the database may change them); the sender waits as long for one it does not know.
SETTINGS_EVERY_S = 10.0  # how stale the failed count that health reports may be


# The kinds whose facts an evaluator records (the writer records the others).
EVALUATED = frozenset({"deploy_worse", "frequency", "error_rate", "latency",
                       "crash_free_sessions", "crash_free_users"})


class Evaluator(Protocol):
    async def run_once(self, now_us: int) -> int: ...


class StoreLookup:
    """router.Lookup over the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def project_names(self, ids: set[int]) -> dict[int, str]:
        return lookup.project_names(self.store, ids)

    def group_statuses(self, groups: set[tuple[int, str]]) -> dict[tuple[int, str], str]:
        return lookup.group_statuses(self.store, groups)


class AlertsExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any], *, store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        # What the dashboard's alerts page asks (dashboard/extension.py).
        self.admin = AlertsAdmin(store, self.config)
        # The configuration's own, then with the dashboard's added (`_load_settings`).
        self.file_rules = [rules_mod.parse(rule) for rule in self.config.get("rules") or []]
        self.file_destinations = {
            item["name"]: destinations_mod.build(item)
            for item in self.config.get("destinations") or []}
        self._page_destinations: dict[str, tuple[str, Any]] = {}  # name: (config, built)
        self._use(self.file_rules, dict(self.file_destinations))
        self._tasks: list[asyncio.Task[None]] = []
        self._wake: asyncio.Event | None = None
        self._failed = 0  # failed deliveries in the store, as last counted

    def _use(self, rules: list[rules_mod.Rule], destinations: dict[str, Any]) -> None:
        """Route, send and evaluate with these rules and destinations from now on."""
        self.rules = rules
        self.destinations = destinations
        self.router = Router(rules, destinations, StoreLookup(self.store))
        self.sender = Sender(self.store, destinations, Settings.of(self.config))
        self.evaluators: list[Evaluator] = _evaluators(self.store, self.config, rules)

    async def _load_settings(self) -> None:
        """The destinations and rules added on the dashboard (storage/alerts/settings.py,
        through admin.py, which opens their sealed credentials), read again every
        SETTINGS_EVERY_S: any collector of the database may have changed them. A
        destination whose configuration did not change keeps its client."""
        runtime = await asyncio.to_thread(self.admin.runtime)
        for problem in runtime.problems:
            log.warning("alerts: a destination is left out: %s", problem)
        built: dict[str, tuple[str, Any]] = {}
        for config in runtime.destinations:
            signature = json.dumps(config, sort_keys=True)
            kept = self._page_destinations.get(config["name"])
            built[config["name"]] = (kept if kept is not None and kept[0] == signature
                                     else (signature, destinations_mod.build(config)))
        for name, (_, destination) in self._page_destinations.items():
            if built.get(name, (None, None))[1] is not destination:
                _close(destination)
        self._page_destinations = built
        self._use(self.file_rules + [rules_mod.parse(rule) for rule in runtime.rules],
                  {**self.file_destinations,
                   **{name: destination for name, (_, destination) in built.items()}})
        if self._wake is not None:
            self._wake.set()  # route and send with them now (a test alert waits for it)

    async def start(self) -> None:
        if self._tasks:
            return
        self._wake = asyncio.Event()
        settings_wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        # A change on this collector's dashboard (a thread) is read again at once.

        def changed() -> None:
            loop.call_soon_threadsafe(settings_wake.set)
        self.admin.on_change = changed
        poll = float(self.config["poll_s"])
        loops: list[tuple[str, float, Callable[[], Awaitable[Any]], asyncio.Event | None]] = [
            # Woken early by send_test: the dashboard's button answers at once.
            ("route and send", poll, self._route_and_send, self._wake),
            ("read settings", SETTINGS_EVERY_S, self._load_settings, settings_wake),
            ("purge", PURGE_EVERY_S, self._purge, None),
            ("count failures", HEALTH_EVERY_S, self._count_failed, None),
            # Cheap without a rule that needs it (no evaluator then).
            ("evaluate", float(self.config["evaluate_s"]), self._evaluate, None),
        ]
        for label, every, turn, wake in loops:
            self._tasks.append(loop.create_task(self._forever(label, every, turn, wake),
                                                name=f"alerts: {label}"))

    async def shutdown(self) -> None:
        tasks, self._tasks = self._tasks, []
        await cancel_and_wait(tasks)
        for destination in self.destinations.values():
            _close(destination)

    async def health(self) -> tuple[bool, str]:
        """Healthy even with failed deliveries: a receiver that refuses alerts is not
        a reason to take the collector out of its load balancer. The count is said
        (the dashboard and /metrics show which)."""
        return True, f"{self._failed} alert deliveries failed" if self._failed else ""

    async def send_test(self, project: str, destination: str) -> str:
        """Record a `test` fact for `project` routed to `destination` only; returns
        the alert's dedupe key. The next turn routes and sends it."""
        if destination not in self.destinations:
            raise ConfigError(f"no alert destination is named {destination!r}")
        project_id = await asyncio.to_thread(keys.project_id_of, self.store, project)
        if project_id is None:
            raise ConfigError(f"no project is named {project!r}")
        key = f"{TEST}:{uuid.uuid4().hex}"
        await asyncio.to_thread(outbox.record_fact, self.store, project_id, TEST,
                                destination, key, now_us(), {"destination": destination})
        if self._wake is not None:
            self._wake.set()
        return key

    # The loops.

    async def _forever(self, label: str, every: float, turn: Callable[[], Awaitable[Any]],
                       wake: asyncio.Event | None) -> None:
        backoff = Backoff(min(every, 1.0), max(every, 60.0))
        while True:
            try:
                await turn()
            except Exception as exc:  # noqa: BLE001 - the store is away: wait, try again
                log.error("alerts: %s failed: %s", label, type(exc).__name__)
                await asyncio.sleep(backoff.next())
                continue
            backoff.reset()
            if wake is None:
                await asyncio.sleep(every)
                continue
            await woken(wake, every)

    async def _route_and_send(self) -> None:
        # Routed even without rules (to no one): facts left unrouted would pile up
        # and, once rules are configured, go out months late. So every collector on
        # one database must have the same alerts: section (docs/alerts.md).
        unrouted, due = await asyncio.to_thread(lookup.work_waiting, self.store,
                                                now_us())
        routed = 0
        while unrouted:
            batch = await asyncio.to_thread(outbox.route_pending, self.store,
                                            self.router.decide, ROUTE_BATCH)
            routed += batch
            unrouted = batch >= ROUTE_BATCH
        if self.destinations and (due or routed):
            await self.sender.run_once()

    async def _evaluate(self) -> None:
        for evaluator in self.evaluators:
            await evaluator.run_once(now_us())

    async def _purge(self) -> None:
        keep_us = int(float(self.config["keep_days"]) * 86400 * 1_000_000)
        await asyncio.to_thread(outbox.purge, self.store, now_us() - keep_us)

    async def _count_failed(self) -> None:
        counts = await asyncio.to_thread(outbox.counts, self.store)
        self._failed = sum(n for (_, status), n in counts.items() if status == "failed")


def _close(destination: Any) -> None:
    close = getattr(destination, "close", None)
    if close is not None:
        close()


def _evaluators(store: Store, config: dict[str, Any], rules: list[rules_mod.Rule]
                ) -> list[Evaluator]:
    """The evaluator that records facts from rollups and deploys (evaluate.py), when a
    rule is on deploy_worse, frequency, error_rate, latency or crash_free_*; none otherwise, so
    that a collector without such rules reads nothing every evaluate_s."""
    evaluated = [rule for rule in rules if rule.on in EVALUATED]
    if not evaluated:
        return []
    return [RuleEvaluator(store, evaluated, int(config["deploy_window_s"]))]


def _check(path: str, config: dict[str, Any]) -> None:
    alerts_config.check(path, config, destinations_mod.check)


def _create(name: str, config: dict[str, Any], host: Host) -> AlertsExtension:
    return AlertsExtension(name, config,
                           store=host.extension("storage", StorageExtension).store)


factory = Factory("alerts", "extension", _create, alerts_config.DEFAULTS, _check)
