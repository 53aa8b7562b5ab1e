"""Admission control for many small requests, beside the exporter's queue bounds.

A single error costs the event loop about 350 µs, two thirds of it HTTP handling;
at twice the rate one loop can serve, the write queue never fills (the loop, not
the writer, is the bottleneck), so nothing was refused: every request waited
longer, and `/health` with them. Two cheap signals now refuse new ingest requests
with 503 + Retry-After (gRPC UNAVAILABLE) before their body is decoded:

- the event loop's lag: a timer that should fire every `TICK` seconds is watched;
  while it fires (or is overdue) more than `max_lag` late, the loop has more work
  than it can turn around, and new work is turned away until it catches up;
- requests in flight: decoded, or being decoded, and waiting for their commit,
  across every receiver; past `max_in_flight`, new ones wait outside.

`/health` and `/metrics` never ask, so they are never refused.

Fairly, between projects: while either signal says the collector is saturated, a
request is refused only if its project already has at least its fair share of the
requests in flight (those in flight divided by the projects that have any); a
project below it (a quiet one, with none or few in flight) is still admitted, up to
`max_in_flight` plus a reserve. So a flooding project is refused first and a quiet
one keeps its latency; the cost is a dict lookup per request, however many projects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

from model.component import Component
from model.errors import Overloaded, RetryableError
from runtime import telemetry

TICK = 0.01  # seconds between two looks at the event loop
# However late the loop, this many requests in flight are always admitted. Refusing
# costs the loop about half of what accepting does, so against clients that retry
# at once, refusing everything would keep the loop late on refusals alone and
# accept nothing (measured: 5 requests/s); these keep the writer's commits going.
MIN_IN_FLIGHT = 8
SMOOTHING = 0.3  # weight of the newest lag sample (about five ticks of memory)


class Admission(Component):
    def __init__(self, max_in_flight: int, max_lag_ms: float, retry_after: int = 1) -> None:
        super().__init__("admission")
        self.max_in_flight = max_in_flight
        self.max_lag = max_lag_ms / 1000  # 0: lag is not watched
        self.retry_after = retry_after
        self.in_flight = 0
        # Requests in flight per project (only projects with some: bounded by them).
        self.by_project: dict[int, int] = {}
        # Beyond max_in_flight, room kept for projects below their fair share.
        self.reserve = max(MIN_IN_FLIGHT, max_in_flight // 8) if max_in_flight < 1 << 29 else 0
        self.lag = 0.0  # smoothed, seconds
        self._due = 0.0  # when the watching timer should fire next (loop time)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watcher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._watcher is not None or self.max_lag <= 0:
            return
        self._loop = asyncio.get_running_loop()
        self._watcher = self._loop.create_task(self._watch())

    async def shutdown(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch(self) -> None:
        assert self._loop is not None
        while True:
            self._due = self._loop.time() + TICK
            await asyncio.sleep(TICK)
            late = max(0.0, self._loop.time() - self._due)
            self.lag += SMOOTHING * (late - self.lag)
            telemetry.EVENT_LOOP_LAG.set(self.lag)

    def refusal(self, project_id: int | None = None) -> RetryableError | None:
        """Why a new request (of `project_id`, when known) would be refused now, or
        None; microseconds."""
        why = self._saturated()
        if why is None:
            return None
        if project_id is not None and self.below_fair_share(project_id):
            return None
        return Overloaded(why, self.retry_after)

    def _saturated(self) -> str | None:
        if self.in_flight >= self.max_in_flight:
            return "too many requests are in flight"
        if self._loop is not None and self.in_flight >= MIN_IN_FLIGHT:
            # A timer overdue right now counts too: the loop may be inside a long turn.
            lag = max(self.lag, self._loop.time() - self._due)
            if lag > self.max_lag:
                return "the collector is busy"
        return None

    def below_fair_share(self, project_id: int) -> bool:
        """Whether a project holds fewer requests in flight than its fair share, with
        room left in the reserve: admitted even while the collector is saturated."""
        if self.in_flight >= self.max_in_flight + self.reserve:
            return False
        mine = self.by_project.get(project_id, 0)
        return mine < max(1.0, self.in_flight / max(1, len(self.by_project)))

    @contextlib.contextmanager
    def admitted(self, project_id: int | None = None) -> Iterator[None]:
        """Count a request in flight for the duration; Overloaded past the bound (a
        project below its fair share: past the reserve)."""
        self.enter(project_id)
        try:
            yield
        finally:
            self.leave(project_id)

    def enter(self, project_id: int | None = None) -> None:
        """`admitted` without a context manager, for the HTTP doors' every request (a
        generator's context manager costs it four calls more): call `leave` after."""
        if self.in_flight >= self.max_in_flight and (
                project_id is None or not self.below_fair_share(project_id)):
            raise Overloaded("too many requests are in flight", self.retry_after)
        self.in_flight += 1
        if project_id is not None:
            by_project = self.by_project
            by_project[project_id] = by_project.get(project_id, 0) + 1

    def leave(self, project_id: int | None = None) -> None:
        self.in_flight -= 1
        if project_id is not None:
            left = self.by_project[project_id] - 1
            if left:
                self.by_project[project_id] = left
            else:
                del self.by_project[project_id]
