"""The token bucket's rule (model/limits.py), the same for the bucket in memory and
the one in the database: a burst, then the rate; debt for a request larger than
what is left; a quota per UTC day or month; the settings' checks."""

from __future__ import annotations

import calendar

import pytest

from model import limits as lim
from model.limits import Bucket, Limit, lend_bucket

DAY = calendar.timegm((2026, 11, 28, 12, 0, 0))


def test_a_burst_then_the_rate_then_debt_for_a_large_request() -> None:
    limit = Limit(rate=10, burst=20)
    bucket = Bucket(limit.burst, DAY)
    assert lend_bucket(bucket, limit, 20, 20, DAY).tokens == 20
    refused = lend_bucket(bucket, limit, 1, 1, DAY)
    assert refused.tokens == 0 and refused.retry_after == pytest.approx(0.1)
    # Half a second later: 5 tokens, and a request of 50 still goes (into debt)...
    assert lend_bucket(bucket, limit, 50, 50, DAY + 0.5).tokens == 50
    assert bucket.tokens == pytest.approx(-45)
    # ...and the bucket lends again only once it holds a whole token: 4.6 s on.
    assert lend_bucket(bucket, limit, 1, 1, DAY + 5.0).tokens == 0
    assert lend_bucket(bucket, limit, 1, 1, DAY + 5.2).tokens == 1


def test_a_slice_is_what_is_left_when_less_than_wanted() -> None:
    limit = Limit(rate=100, burst=100)
    bucket = Bucket(30, DAY)
    assert lend_bucket(bucket, limit, want=50, need=5, now=DAY).tokens == 30


def test_a_quota_holds_until_the_day_ends_and_the_month_too() -> None:
    daily = Limit(quota=3, period="day")
    bucket = Bucket(0, DAY)
    assert [lend_bucket(bucket, daily, 1, 1, DAY).tokens for _ in range(3)] == [1, 1, 1]
    over = lend_bucket(bucket, daily, 1, 1, DAY + 60)
    assert over.tokens == 0 and over.outcome == lim.OVER_QUOTA
    assert over.retry_after == 12 * 3600 - 60
    assert lend_bucket(bucket, daily, 1, 1, DAY + 12 * 3600).tokens == 1  # the next day
    assert lim.period_end(DAY, "month") == calendar.timegm((2026, 12, 1, 0, 0, 0))
    assert lim.period_end(calendar.timegm((2026, 12, 31, 23, 0, 0)), "month") == \
        calendar.timegm((2027, 1, 1, 0, 0, 0))


@pytest.mark.parametrize("raw, problem", [
    ({"error": {"rate": -1}}, "x.error.rate must be a number >= 0"),
    ({"error": {"rate": float("inf")}}, "x.error.rate must be a number >= 0"),
    ({"error": {"rate": True}}, "x.error.rate must be a number >= 0"),
    ({"errors": {"rate": 1}}, "unknown category 'errors'"),
    ({"error": {"rat": 1}}, "unknown key 'rat'"),
    ({"error": {"quota": 5, "period": "year"}}, "period must be one of day, month"),
    ({"error": 5}, "x.error must be a mapping"),
])
def test_bad_settings_are_named(raw: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        lim.parse_limits("x", raw)


def test_the_burst_is_at_least_a_second_of_the_rate() -> None:
    assert lim.parse_limit("x", {"rate": 50}).burst == 50
    assert lim.parse_limit("x", {"rate": 0.5}).burst == 1
    assert lim.parse_limit("x", {"rate": 5, "burst": 100}).burst == 100
    assert lim.sentry_categories((lim.ERROR, lim.SPAN)) == \
        "error;default;security;transaction;span"
