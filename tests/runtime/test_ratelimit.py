"""The limiter the doors ask (runtime/ratelimit.py), over the bucket in memory: a
category found empty is refused from memory before the body; a door of one category
lets in only what its bucket, as last seen, can cover; one project's limit leaves
another's alone; a refusal takes nothing from the other categories."""

from __future__ import annotations

import asyncio

import pytest

from model import limits as lim
from model.errors import RateLimited
from model.limits import Limit
from runtime.ratelimit import Limiter, LocalLender

LIMITS = {lim.ERROR: Limit(rate=0.01, burst=2), lim.SPAN: Limit(rate=0.01, burst=100)}


def limiter() -> Limiter:
    return Limiter(LocalLender(), lambda project: LIMITS if project == 1 else {})


def test_empty_is_refused_before_the_body_and_other_projects_are_not() -> None:
    async def run() -> None:
        limits = limiter()
        assert limits.closed(1, (lim.ERROR,)) is None  # nothing known yet
        limits.release(1, (lim.ERROR,))
        await limits.take(1, {lim.ERROR: 2})
        refusal = limits.closed(1, (lim.ERROR,))
        assert isinstance(refusal, RateLimited)
        assert refusal.categories == (lim.ERROR,) and refusal.retry_after >= 1
        assert limits.closed(1, (lim.SPAN,)) is None  # another category
        # A door of several categories is refused only when all are closed.
        assert limits.closed(1, (lim.ERROR, lim.SPAN)) is None
        for _ in range(50):
            await limits.take(2, {lim.ERROR: 10})  # another project: unlimited
    asyncio.run(run())


def test_a_refusal_takes_nothing_from_the_other_categories() -> None:
    async def run() -> None:
        limits = limiter()
        await limits.take(1, {lim.ERROR: 2})
        with pytest.raises(RateLimited) as refused:
            await limits.take(1, {lim.ERROR: 1, lim.SPAN: 60})
        assert refused.value.categories == (lim.ERROR,)
        await limits.take(1, {lim.SPAN: 100})  # the spans' burst is whole
        with pytest.raises(RateLimited):
            await limits.take(1, {lim.SPAN: 1})
    asyncio.run(run())


def test_a_door_lets_in_only_what_its_bucket_can_cover() -> None:
    async def run() -> None:
        limits = limiter()
        await limits.take(1, {lim.SPAN: 40})  # 60 left; requests of 40 on average
        assert limits.closed(1, (lim.SPAN,)) is None  # let in: a token is left
        assert limits.closed(1, (lim.SPAN,)) is None  # the first takes 40: 20 left
        assert limits.closed(1, (lim.SPAN,)) is not None  # the two take 80 of 60
        limits.release(1, (lim.SPAN,))
        assert limits.closed(1, (lim.SPAN,)) is None
    asyncio.run(run())
