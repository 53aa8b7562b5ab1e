"""Group commit into the outbox: every body handed over, and every row the sender
has delivered, while a commit runs waits for the next one, and one transaction
inserts and deletes them all. So concurrent requests share a commit (and its
fsync) instead of paying one each, and sending does not add a commit per row. A
request is answered only once its rows are committed: a 202 means "in the queue,
durably". A delivered row not yet deleted when the process dies is sent again
(at least once).

The transaction runs in a thread (the database driver blocks), one at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from model.errors import StoreUnavailable
from model.timeutil import now_us
from storage import outbox
from storage.outbox import Entry
from storage.store import Store

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Waiting:
    entries: list[Entry]
    sent: list[int]
    future: asyncio.Future[None]


class Enqueuer:
    def __init__(self, store: Store, queue: str) -> None:
        self.store = store
        self.queue = queue
        self._waiting: list[_Waiting] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # Whether the last commit failed: the queue cannot be written (health).
        self.failing = False
        self._busy = False  # a commit is running in its thread

    def start(self) -> None:
        if self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def shutdown(self) -> None:
        """Commit what was handed over, then stop."""
        task, self._task = self._task, None
        if task is None:
            return
        while (self._waiting or self._busy) and not task.done():
            self._wake.set()
            await asyncio.sleep(0.01)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for item in self._waiting:  # only if the loop died: nothing may wait for ever
            if not item.future.done():
                item.future.set_exception(StoreUnavailable("the collector is shutting down"))
        self._waiting = []

    async def put(self, entries: list[Entry]) -> None:
        """Return once `entries` are committed; raise what the commit raised."""
        await self._submit(_Waiting(entries, [], self._future()))

    async def delete(self, ids: list[int]) -> None:
        """Return once the rows `ids` (sent) are deleted."""
        await self._submit(_Waiting([], ids, self._future()))

    def _future(self) -> asyncio.Future[None]:
        return asyncio.get_running_loop().create_future()

    async def _submit(self, item: _Waiting) -> None:
        if self._task is None:
            raise StoreUnavailable("the forwarding queue is closed")
        self._waiting.append(item)
        self._wake.set()
        await item.future

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            waiting, self._waiting = self._waiting, []
            if not waiting:
                continue
            entries = [entry for item in waiting for entry in item.entries]
            sent = [row_id for item in waiting for row_id in item.sent]
            self._busy = True
            try:
                await asyncio.to_thread(outbox.commit, self.store, self.queue, entries, sent,
                                        now_us())
            except Exception as exc:  # noqa: BLE001 - every waiting request gets the error
                log.error("cannot write the forwarding queue: %s", exc)
                self.failing = True
                error = StoreUnavailable("the forwarding queue cannot be written")
                for item in waiting:
                    if not item.future.done():
                        item.future.set_exception(error)
                continue
            finally:
                self._busy = False
            self.failing = False
            for item in waiting:
                if not item.future.done():  # a client that went away: committed all the same
                    item.future.set_result(None)
