"""runtime/telemetry.py's `once_per_turn`: a gauge that follows a value changed by
every request is set once per turn of the event loop, however many changed it."""

from __future__ import annotations

import asyncio

from runtime.telemetry import once_per_turn


def test_runs_once_at_the_end_of_the_turn_however_often_asked() -> None:
    calls: list[int] = []

    async def main() -> None:
        soon = once_per_turn(lambda: calls.append(1))
        for _ in range(5):
            soon()
        assert calls == []  # not yet: later in this turn
        await asyncio.sleep(0)
        assert calls == [1]
        soon()
        soon()
        await asyncio.sleep(0)
        assert calls == [1, 1]  # once more, for the next turn's changes

    asyncio.run(main())


def test_runs_at_once_without_an_event_loop() -> None:
    calls: list[int] = []
    soon = once_per_turn(lambda: calls.append(1))
    soon()
    soon()
    assert calls == [1, 1]
