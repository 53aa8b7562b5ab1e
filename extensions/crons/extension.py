"""The crons extension: every `check_every_s`, one turn of the cron checker
(storage/crons/checker.py) in a thread, never on the event loop. Of several
collectors on one database only the one holding the checker's lease works; the
others find it taken and try again next turn, so that one of them takes over
within the lease's 30 s when the holder stops. Start and shutdown are safe in any
order, shutdown without start too; shutdown lets the lease go.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from typing import Any

from extensions.crons import config as crons_config
from extensions.storage import StorageExtension
from model.component import Extension, Host
from runtime.factory import Factory
from runtime.retry import Backoff
from storage.crons.checker import Checker, Report
from storage.store import Store

log = logging.getLogger(__name__)


class CronsExtension(Extension):
    def __init__(self, name: str, config: dict[str, Any], *, store: Store) -> None:
        super().__init__(name, config)
        self.store = store
        holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.checker = Checker(store, holder)
        self.every = float(self.config["check_every_s"])
        self.last: Report | None = None  # the last turn's, for tests and logs
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._task is not None or not self.config["enabled"]:
            return
        self._task = asyncio.get_running_loop().create_task(self._forever(),
                                                            name="cron checker")

    async def shutdown(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        with contextlib.suppress(Exception):  # the store may be gone: the lease expires
            await asyncio.to_thread(self.checker.release)

    async def _forever(self) -> None:
        backoff = Backoff(min(self.every, 1.0), max(self.every, 60.0))
        while True:
            try:
                report = await asyncio.to_thread(self.checker.run)
            except Exception as exc:  # noqa: BLE001 - the store is away: wait, try again
                log.error("crons: the checker failed: %s: %s", type(exc).__name__, exc)
                await asyncio.sleep(backoff.next())
                continue
            backoff.reset()
            self.last = report
            if report.missed or report.timeouts or report.opened or report.resolved:
                log.info("crons: %d missed, %d timed out, %d incidents opened, %d resolved",
                         report.missed, report.timeouts, report.opened, report.resolved)
            await asyncio.sleep(self.every)


def _create(name: str, config: dict[str, Any], host: Host) -> CronsExtension:
    return CronsExtension(name, config, store=host.extension("storage", StorageExtension).store)


factory = Factory("crons", "extension", _create, crons_config.DEFAULTS, crons_config.check)
