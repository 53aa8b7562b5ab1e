"""Stopping background tasks: every loop a component runs on the event loop (the
forward exporter's senders, the alerts extension's turns) is stopped the same way."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel every task, then wait for each to end. Its cancellation is what was
    asked for; anything else a task raised goes up."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task
