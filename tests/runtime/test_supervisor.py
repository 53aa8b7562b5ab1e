"""The child-process supervisor (runtime/supervisor.py), with a real tiny child
(tests/runtime/supervised_child.py): starts it, restarts it with exponential
backoff and full jitter, starts over quickly once a child stayed up, and stops
cleanly in any order."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from runtime import channel
from runtime.retry import Backoff
from runtime.supervisor import ChildFailed, Supervisor

CHILD = "tests.runtime.supervised_child"


class Owner:
    """What a supervisor's owner sees: items received and exits reported."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self.config = dict(config or {})
        self.items: list[channel.Message] = []
        self.exits: list[int | None] = []
        self.configs_sent = 0
        self.child = Supervisor("test child", CHILD, self._config, on_item=self._on_item,
                                on_exit=self.exits.append, **kwargs)

    def _config(self) -> dict[str, Any]:
        self.configs_sent += 1
        return dict(self.config)

    def _on_item(self, item: channel.Item) -> None:
        self.items.append(item[0])

    async def echo(self, value: str) -> int:
        """Round trip through the running child; its pid."""
        self.child.send(("echo", value))
        await until(lambda: any(m[0] == "echo" and m[2] == value for m in self.items))
        return next(m[1] for m in self.items if m[0] == "echo" and m[2] == value)


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_child_starts_answers_and_stops_cleanly_in_any_order() -> None:
    owner = Owner()

    async def run() -> int:
        await owner.child.shutdown()  # before start: nothing to do
        fresh = Owner()
        await fresh.child.start()
        assert fresh.child.ready and fresh.child.open
        pid = await fresh.echo("hello")
        assert pid == fresh.child.pid and alive(pid)
        await fresh.child.shutdown()
        await fresh.child.shutdown()  # twice
        assert not fresh.child.ready and fresh.child.pid is None
        assert fresh.exits == []  # stopping is not an exit to report
        return pid

    pid = asyncio.run(run())
    assert not alive(pid)


def test_a_killed_child_is_reported_and_replaced_quickly() -> None:
    owner = Owner()

    async def run() -> tuple[int, int, float]:
        await owner.child.start()
        first = await owner.echo("one")
        killed = time.monotonic()
        os.kill(first, signal.SIGKILL)
        await until(lambda: owner.exits != [])
        await until(lambda: owner.child.ready)
        recovered = time.monotonic() - killed
        second = await owner.echo("two")
        await owner.child.shutdown()
        return first, second, recovered

    first, second, recovered = asyncio.run(run())
    assert second != first and not alive(second)
    assert owner.exits in ([-signal.SIGKILL], [None])  # reported once, at once
    assert owner.configs_sent == 2  # the configuration is asked again for the new child
    assert owner.child.backoff.attempts == 1
    assert recovered < 3.0  # the first restart comes within 0.1 s, plus Python's start


def test_a_crash_loop_backs_off_and_a_child_that_stays_up_starts_it_over() -> None:
    owner = Owner(backoff=Backoff(first=0.05, cap=0.4, rng=random.Random(1)),
                  stable_after=1.0)

    async def run() -> None:
        await owner.child.start()
        pid = await owner.echo("first")
        owner.config["exit_at_once"] = True  # every new child now dies at start
        os.kill(pid, signal.SIGKILL)
        await until(lambda: owner.child.backoff.attempts >= 5)
        # Each failed start is reported (what was sent to it gets answered) and
        # costs one child: no tight fork loop.
        assert owner.configs_sent - 1 <= owner.child.backoff.attempts
        assert len(owner.exits) >= 4
        assert owner.child.backoff.ceiling() == 0.4
        del owner.config["exit_at_once"]
        await until(lambda: owner.child.ready)
        assert owner.child.backoff.attempts >= 5  # not reset: it has not stayed up yet
        pid = await owner.echo("after the loop")
        await asyncio.sleep(1.2)  # stays up past stable_after
        os.kill(pid, signal.SIGKILL)
        await until(lambda: owner.child.ready and owner.child.pid != pid)
        assert owner.child.backoff.attempts == 1  # started over at the first delay
        await owner.child.shutdown()

    asyncio.run(run())


def test_a_child_that_cannot_start_is_a_start_error_and_leaves_no_process() -> None:
    failing = Owner({"fail": "the settings are wrong"})
    silent = Owner({"silent": True}, start_timeout=0.5)

    async def run() -> None:
        with pytest.raises(ChildFailed, match="test child did not start: the settings are"):
            await failing.child.start()
        started = time.monotonic()
        with pytest.raises(ChildFailed, match="no answer within"):
            await silent.child.start()
        assert time.monotonic() - started < 5  # killed, not waited for
        for owner in (failing, silent):
            assert owner.child.pid is None and not owner.child.open
            assert owner.exits == []
            await owner.child.shutdown()

    asyncio.run(run())


def test_shutdown_with_a_goodbye_waits_for_the_child_to_finish() -> None:
    owner = Owner()

    async def run() -> int:
        await owner.child.start()
        pid = await owner.echo("x")
        await owner.child.shutdown(goodbye=("drain",))
        return pid

    pid = asyncio.run(run())
    assert owner.items[-1] == ("bye",)  # it answered before it was reaped
    assert owner.exits == [] and not alive(pid)


def test_shutdown_during_a_restart_delay_returns_at_once() -> None:
    rng = random.Random(5)
    assert random.Random(5).uniform(0.0, 20.0) > 2.0  # the delay this test waits in
    owner = Owner(backoff=Backoff(first=20.0, cap=20.0, rng=rng))

    async def run() -> float:
        await owner.child.start()
        pid = await owner.echo("x")
        os.kill(pid, signal.SIGKILL)
        await until(lambda: owner.exits != [])
        await asyncio.sleep(0.2)  # the old child reaped, the restart waiting
        started = time.monotonic()
        await owner.child.shutdown()
        return time.monotonic() - started

    assert asyncio.run(run()) < 1.0
    assert owner.configs_sent == 1 and owner.child.pid is None
