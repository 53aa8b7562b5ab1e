"""Stopping background tasks (runtime/tasks.py)."""

from __future__ import annotations

import asyncio

import pytest

from runtime.tasks import cancel_and_wait, woken


def test_every_task_is_cancelled_and_waited_for() -> None:
    ended: list[str] = []

    async def loop(name: str) -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            ended.append(name)

    async def run() -> list[asyncio.Task[None]]:
        tasks = [asyncio.get_running_loop().create_task(loop(n)) for n in ("a", "b")]
        await asyncio.sleep(0)
        await cancel_and_wait(tasks)
        return tasks

    tasks = asyncio.run(run())
    assert sorted(ended) == ["a", "b"] and all(t.cancelled() for t in tasks)


def test_what_a_task_raised_besides_its_cancellation_goes_up() -> None:
    async def broken() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise RuntimeError("a bug in the stopping code") from None

    async def run() -> None:
        task = asyncio.get_running_loop().create_task(broken())
        await asyncio.sleep(0)
        await cancel_and_wait([task])

    with pytest.raises(RuntimeError):
        asyncio.run(run())


def test_woken_returns_when_set_or_after_the_timeout_and_clears() -> None:
    async def run() -> tuple[float, float, bool]:
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        start = loop.time()
        await woken(event, 0.1)  # nobody sets it: the timeout
        waited = loop.time() - start
        loop.call_later(0.05, event.set)
        start = loop.time()
        await woken(event, 30.0)
        return waited, loop.time() - start, event.is_set()

    timed_out, set_after, still_set = asyncio.run(run())
    assert 0.09 <= timed_out < 5.0
    assert set_after < 5.0  # woken, not the 30 s timeout
    assert not still_set
