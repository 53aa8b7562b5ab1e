"""Rate limits and quotas per project, as the doors ask them: before the body (from
the key alone: is one of the door's categories closed?) and once the records are
counted (do its buckets cover them?).

Each process keeps, per (project, category), a *stock* of tokens lent to it by a
`Lender` that holds the project's real bucket and quota:

- `LocalLender`, the bucket in this process's memory: one collector alone;
- the shared lender (storage/limits/leases.py, wired by extensions/limits.py): the
  bucket and the quota are rows in the database, and a process takes a *slice* of
  tokens (`slice_seconds` of the rate) in one short transaction, then spends it
  from memory. So a limit is the project's total over every process of a serve group
  and every collector on one PostgreSQL, for one transaction per slice.

A slice not spent within `lease_seconds` is thrown away: tokens lent long ago do not
add a burst later. So the limit holds from above exactly (every token let through
came out of the one bucket: over any T seconds at most `burst + rate * (T +
lease_seconds)`), and from below within a slice per process per `lease_seconds`
(tokens a process held and threw away; docs/limits.md).

A category found empty is *closed* until the lender says it refills: every request
for it is refused from memory, before its body is read, without asking the lender
again. That makes a refusal cheap (microseconds, no transaction).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from model import limits as lim
from model.errors import RateLimited
from model.limits import Bucket, Grant, Limit, Limits, lend_bucket

# How long a door holds the answer to a request refused from the key alone. A client
# that honours Retry-After waits a second or more anyway; one that sends again at once
# (a flood) is slowed to a few requests a second per connection, at the cost of a
# timer, instead of keeping the event loop busy refusing it (bench/limits.py).
PACE_SECONDS = 0.25


class Lender(Protocol):
    async def lend(self, project_id: int, category: str, limit: Limit, want: float,
                   need: float) -> Grant: ...


class LocalLender:
    """The buckets in this process's memory (one collector, one process)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._buckets: dict[tuple[int, str], Bucket] = {}

    async def lend(self, project_id: int, category: str, limit: Limit, want: float,
                   need: float) -> Grant:
        return lend_from(self._buckets, (project_id, category), limit, want, need,
                         self.clock())


def lend_from(buckets: dict[tuple[int, str], Bucket], key: tuple[int, str], limit: Limit,
              want: float, need: float, now: float) -> Grant:
    bucket = buckets.get(key)
    if bucket is None:
        bucket = buckets[key] = Bucket(limit.burst, now)
    return lend_bucket(bucket, limit, want, need, now)


@dataclass(slots=True)
class _Stock:
    tokens: float = 0.0
    expires: float = 0.0  # monotonic: tokens left then are thrown away
    closed_until: float = 0.0  # monotonic: refused from memory until then
    outcome: str = lim.RATE_LIMITED
    retry_after: float = 1.0
    lending: asyncio.Future[None] | None = None
    # What the bucket held after the last lending, and when (monotonic), with its rate
    # and burst: the estimate that lets a door refuse before the body.
    left: float = 0.0
    left_at: float = 0.0
    rate: float = 0.0
    burst: float = 0.0
    # Requests let in before their body and not yet counted, and the records a
    # request of this stock has carried, on average: what those will likely take.
    pending: int = 0
    per_request: float = 0.0  # 0: none counted yet

    def estimate(self, now: float) -> float:
        """The tokens this process could spend now without asking: its slice, and
        what the bucket held, refilled since (others may have spent some)."""
        held = self.tokens if self.expires > now else 0.0
        return held + min(self.burst, self.left + self.rate * (now - self.left_at))


class Limiter:
    """Per project and category: refuse before the body when closed, take tokens once
    the records are counted. `limits_of(project_id)` is the project's limits (a dict
    lookup: extensions/limits.py keeps them in memory)."""

    def __init__(self, lender: Lender, limits_of: Callable[[int], Limits],
                 slice_seconds: float = 0.0, lease_seconds: float = 2.0) -> None:
        self.lender = lender
        self.limits_of = limits_of
        self.slice_seconds = slice_seconds  # 0: lend exactly what is needed
        self.lease_seconds = lease_seconds
        self._stocks: dict[tuple[int, str], _Stock] = {}

    def closed(self, project_id: int, categories: tuple[str, ...]) -> RateLimited | None:
        """Before the body: RateLimited when every one of `categories` (what the door
        can carry), or the project's bytes, is closed now; microseconds.

        A door of one category is also refused while its bucket, as last seen, could
        not cover the requests already let in and this one (each reckoned at the
        records its category's requests carry on average): when the bucket refills,
        one request gets in and takes it, not every connection's, each decoded only to
        be refused. A request let in is counted until the door calls `release`."""
        if not self._stocks:
            return None
        now = time.monotonic()
        bytes_stock = self._stocks.get((project_id, lim.BYTES))
        if bytes_stock is not None and bytes_stock.closed_until > now:
            return self._refusal((lim.BYTES,), [bytes_stock], now)
        if len(categories) == 1:
            stock = self._stocks.get((project_id, categories[0]))
            if stock is None:
                return None
            if stock.closed_until > now:
                return self._refusal(categories, [stock], now)
            if stock.rate > 0:
                # Those let in take their average; this one needs a token after them.
                expected = stock.pending * stock.per_request + 1.0
                short = expected - stock.estimate(now)
                if short > 0:  # looked at again next time: not closed for a while
                    retry = max(1, math.ceil(short / stock.rate))
                    return RateLimited(
                        f"the project is over its rate limit for {categories[0]}; "
                        f"retry after {retry} s", retry, categories, lim.RATE_LIMITED)
            stock.pending += 1
            return None
        stocks = []
        for category in categories:
            stock = self._stocks.get((project_id, category))
            if stock is None or stock.closed_until <= now:
                return None
            stocks.append(stock)
        return self._refusal(categories, stocks, now) if stocks else None

    async def take(self, project_id: int, counts: Mapping[str, int]) -> None:
        """Take one token per record (and byte) counted, or raise RateLimited naming the
        categories that are over; nothing is taken from any category then."""
        limits = self.limits_of(project_id)
        if not limits:
            return
        wanted = [(category, n, limits[category]) for category, n in counts.items()
                  if n > 0 and category in limits and limits[category].limited]
        if not wanted:
            return
        now = time.monotonic()
        over: list[tuple[str, _Stock]] = []
        for category, n, limit in wanted:
            stock = self._stocks.get((project_id, category))
            if stock is None:
                stock = self._stocks[(project_id, category)] = _Stock()
            if stock.closed_until > now:
                over.append((category, stock))
            elif stock.tokens < n or stock.expires <= now:
                await self._lend(project_id, category, limit, stock, n)
                if stock.tokens <= 0 or stock.closed_until > time.monotonic():
                    over.append((category, stock))
        if over:
            raise self._refusal(tuple(c for c, _ in over), [s for _, s in over],
                                time.monotonic())
        for category, n, _limit in wanted:
            stock = self._stocks[(project_id, category)]
            stock.tokens -= n
            stock.per_request = (n if stock.per_request == 0
                                 else stock.per_request + 0.2 * (n - stock.per_request))

    def release(self, project_id: int, categories: tuple[str, ...]) -> None:
        """A request `closed` let in is counted (taken or refused) or failed."""
        if len(categories) == 1:
            stock = self._stocks.get((project_id, categories[0]))
            if stock is not None and stock.pending > 0:
                stock.pending -= 1

    async def _lend(self, project_id: int, category: str, limit: Limit, stock: _Stock,
                    n: int) -> None:
        """Top the stock up to cover `n`; one lending at a time per stock (the others
        wait for it, then look again)."""
        while stock.lending is not None:
            await asyncio.shield(stock.lending)
            if stock.tokens >= n and stock.expires > time.monotonic():
                return
        if stock.closed_until > time.monotonic():
            return
        future = asyncio.get_running_loop().create_future()
        stock.lending = future
        try:
            if stock.expires <= time.monotonic():
                stock.tokens = 0.0  # an old slice is not spent now
            need = max(0.0, n - stock.tokens)
            want = max(need, limit.rate * self.slice_seconds)
            if limit.rate <= 0 and self.slice_seconds > 0:  # a quota alone: a thousandth
                want = max(need, limit.quota / 1000)
            granted = await self.lender.lend(project_id, category, limit, want, need)
            now = time.monotonic()
            stock.left, stock.left_at = granted.left, now
            stock.rate, stock.burst = limit.rate, limit.burst
            if granted.tokens > 0:
                stock.tokens += granted.tokens
                stock.expires = now + self.lease_seconds
            else:
                stock.closed_until = now + granted.retry_after
                stock.retry_after = granted.retry_after
                stock.outcome = granted.outcome
        finally:
            stock.lending = None
            future.set_result(None)

    @staticmethod
    def _refusal(categories: tuple[str, ...], stocks: list[_Stock], now: float
                 ) -> RateLimited:
        retry = max(1, math.ceil(max(s.closed_until - now for s in stocks)))
        over_quota = all(s.outcome == lim.OVER_QUOTA for s in stocks)
        outcome = lim.OVER_QUOTA if over_quota else lim.RATE_LIMITED
        what = "quota" if over_quota else "rate limit"
        return RateLimited(f"the project is over its {what} for {', '.join(categories)}; "
                           f"retry after {retry} s", retry, categories, outcome)

    def forget(self, keep: Callable[[int], bool]) -> None:
        """Drop the stocks of projects `keep` says no (limits removed, project gone)."""
        for key in [key for key in self._stocks if not keep(key[0])]:
            stock = self._stocks[key]
            if stock.lending is None:
                del self._stocks[key]
