"""The one retry mechanism (runtime/retry.py): backoff with full jitter, and what
a server's Retry-After asks for. Both the forward exporter's client and the alert
destinations read Retry-After through it."""

from __future__ import annotations

import email.utils
import random

import pytest

from runtime.retry import MAX_RETRY_AFTER, Backoff, full_jitter, parse_retry_after


def test_backoff_doubles_its_ceiling_to_the_cap_and_draws_below_it() -> None:
    backoff = Backoff(first=0.1, cap=1.0, rng=random.Random(7))
    ceilings, delays = [], []
    for _ in range(7):
        ceilings.append(backoff.ceiling())
        delays.append(backoff.next())
    assert ceilings == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0])
    # Full jitter: uniform in [0, ceiling], the same for the same seed.
    reference = random.Random(7)
    assert delays == [reference.uniform(0.0, ceiling) for ceiling in ceilings]
    assert all(0.0 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    backoff.reset()
    assert (backoff.attempts, backoff.ceiling()) == (0, 0.1)
    # Very many attempts stay at the cap (no overflow).
    backoff.attempts = 10_000
    assert backoff.ceiling() == 1.0


def test_backoff_jitter_is_full_not_half() -> None:
    """Drawn from the whole range below the ceiling (restarts spread out), not from
    its upper half."""
    backoff = Backoff(first=1.0, cap=1.0, rng=random.Random(3))
    draws = [backoff.next() for _ in range(4000)]
    assert min(draws) < 0.05 and max(draws) > 0.95
    assert sum(draws) / len(draws) == pytest.approx(0.5, abs=0.03)


def test_retry_after_in_seconds_or_as_an_http_date() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 3 ") == 3.0
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after(date, now=1_000_000) == 30.0
    assert parse_retry_after(date, now=2_000_000) == 0.0  # already past
    assert parse_retry_after("999999") == MAX_RETRY_AFTER
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None


def test_retry_after_reads_seconds_and_dates_and_caps_at_an_hour() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("999999") == 3600.0
    assert parse_retry_after("Thu, 01 Jan 2026 00:01:00 GMT", now=1_767_225_600) == 60.0
    assert parse_retry_after("Thu, 01 Jan 2026 00:01:00 GMT", now=1_767_225_700) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_only_ascii_digits_are_seconds() -> None:
    """str.isdigit takes a superscript two, which float() refuses: that used to raise
    out of both copies of the parser (the forward sender's row stayed stuck until a
    restart; an alert was retried as an internal error)."""
    assert parse_retry_after("\u00b2") is None
    assert parse_retry_after("\u0663") is None  # an Arabic-Indic three
    assert parse_retry_after("12") == 12.0


def test_a_date_without_a_zone_is_utc() -> None:
    """HTTP dates are GMT; "-0000" (no zone) must not be read in local time."""
    assert parse_retry_after("Thu, 01 Jan 2026 00:01:00 -0000", now=1_767_225_600) == 60.0


def test_full_jitter_is_what_backoff_draws() -> None:
    """The alert sender counts attempts in the store, the forward sender in a Backoff:
    both draw the same delays for the same attempt."""
    backoff = Backoff(first=0.5, cap=8.0, rng=random.Random(11))
    reference = random.Random(11)
    for attempt in range(8):
        assert backoff.next() == full_jitter(attempt, 0.5, 8.0, reference)
