"""The retention extension: every `sweep_every_seconds`, one sweep
(storage/retention/sweep.py) in a thread, never on the event loop, then, on SQLite, the
free pages given back (storage/retention/sqlite_space.py). Of several collectors on one
database only the one holding the lease sweeps; the others find it taken and wait
for the next turn. Start and shutdown are safe in any order, shutdown without start
too; shutdown stops a sweep between two batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import uuid
from typing import Any

from extensions.retention import config as retention_config
from extensions.storage import StorageExtension
from model.component import Extension, Host
from runtime.factory import Factory
from runtime.retry import Backoff
from storage.retention import sqlite_space, sweep
from storage.store import Store

log = logging.getLogger(__name__)

FIRST_SWEEP_S = 60.0  # at most this long after start: a restarted collector sweeps too


class RetentionExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any], *, store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        defaults, projects = retention_config.policy_values(self.config)
        self.policy = sweep.Policy(defaults, projects, int(self.config["batch_rows"]),
                                   retention_config.seconds("audit_log",
                                                            self.config["audit_log"]),
                                   int(self.config["source_map_releases"]))
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.every = float(self.config["sweep_every_seconds"])
        self.last: sweep.SweepReport | None = None  # the last sweep's, for tests and logs
        self.sweeps = 0  # sweeps this collector ran (held the lease)
        self._stop = threading.Event()
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None  # set at shutdown: ends the wait

    async def start(self) -> None:
        if self._task is not None or not self.config["enabled"]:
            return
        self._stop.clear()
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._forever(),
                                                            name="retention sweep")

    async def shutdown(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()  # a sweep in its thread stops after its batch
        if self._wake is not None:
            self._wake.set()
        await asyncio.wait([task])
        with contextlib.suppress(asyncio.CancelledError):
            task.result()

    async def _forever(self) -> None:
        backoff = Backoff(min(self.every, 1.0), max(self.every, 60.0))
        wait = min(self.every, FIRST_SWEEP_S)
        assert self._wake is not None
        while True:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can lose a
            # cancellation. No thread waits meanwhile (the default pool is small).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()
            if self._stop.is_set():
                return
            try:
                await asyncio.to_thread(self.sweep_once)
            except Exception as exc:  # noqa: BLE001 - the store is away: wait, try again
                log.error("retention: the sweep failed: %s: %s", type(exc).__name__, exc)
                wait = backoff.next()
                continue
            backoff.reset()
            wait = self.every

    def sweep_once(self) -> sweep.SweepReport:
        """One sweep and the space given back; in a thread (blocking)."""
        outcome = sweep.sweep(self.store, self.policy, self.holder, stop=self._stop)
        if outcome.swept:
            self.sweeps += 1
            sqlite_space.give_back(self.store, stop=self._stop)
            if outcome.deleted or outcome.partitions:
                log.info("retention: deleted %s; %d error groups; partitions dropped: %s",
                         ", ".join(f"{n} {t}" for t, n in sorted(outcome.deleted.items()))
                         or "no rows", outcome.groups, ", ".join(outcome.partitions) or "none")
        self.last = outcome
        return outcome


def _create(name: str, config: dict[str, Any], host: Host) -> RetentionExtension:
    return RetentionExtension(name, config,
                              store=host.extension("storage", StorageExtension).store)


factory = Factory("retention", "extension", _create, retention_config.DEFAULTS,
                  retention_config.check)
