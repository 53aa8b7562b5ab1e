"""Background loops on the event loop (the forward exporter's senders, the alerts
extension's turns): how they wait to be woken, and how they are stopped."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any


async def woken(event: asyncio.Event, timeout: float) -> None:
    """Wait until `event` is set or `timeout` seconds have passed, then clear it.
    asyncio.timeout, not wait_for: Python 3.11's wait_for can lose the cancellation
    that stops the loop."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            await event.wait()
    event.clear()


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel every task, then wait for each to end. Its cancellation is what was
    asked for; anything else a task raised goes up."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task
