"""Stopping background tasks (sounding/tasks.py)."""

from __future__ import annotations

import asyncio

import pytest

from sounding.tasks import cancel_and_wait


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
