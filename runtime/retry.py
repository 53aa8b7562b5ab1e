"""Trying again: the backoff every retrying loop of the collector draws its delays
from, and the `Retry-After` an HTTP server may answer with. One mechanism, as the
OpenTelemetry Collector's exporterhelper gives every exporter one retry: the
supervisor's restarts (runtime/supervisor.py), the decode workers', the forward
exporter's sender (exporters/forward/sender.py), the alert sender
(extensions/alerts/pacing.py) and the extensions' background loops.

Exponential backoff with full jitter: the n-th delay (from 0) is drawn uniformly
from [0, min(cap, first * 2**n)], so that parties that failed together do not
retry together. A server's `Retry-After` wins over the drawn delay where the
caller honours it, bounded by MAX_RETRY_AFTER so that an upstream asking for a day
is not obeyed blindly.

What one attempt to send came to is one of three values, as the Collector's
exporterhelper sorts errors: Sent; Retry (retryable: later, after the server's
Retry-After or the sender's backoff); Failed (permanent: never going to work, not
tried again). The forward exporter's client and every alert destination answer
with them.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC

MAX_RETRY_AFTER = 3600.0  # seconds: the longest Retry-After honoured

# By default, the restarts of child processes (runtime/supervisor.py): the first
# within 0.1 s, the ceiling doubling up to 30 s.
FIRST_DELAY = 0.1  # seconds
MAX_DELAY = 30.0


@dataclass(frozen=True, slots=True)
class Sent:
    """Taken. `rejected`: records the receiver took the request with but refused one
    by one (OTLP partial_success)."""

    rejected: int = 0


@dataclass(frozen=True, slots=True)
class Retry:
    """Not now (a timeout, a connection error, 429, a 5xx the sender retries);
    `after_s` from Retry-After if given, else the sender's backoff decides."""

    after_s: float | None
    error: str


@dataclass(frozen=True, slots=True)
class Failed:
    """Refused for good (another 4xx, a bad address): not to be tried again."""

    error: str


SendResult = Sent | Retry | Failed


def ceiling(attempts: int, first: float, cap: float) -> float:
    """The longest delay after `attempts` earlier ones (0 for the first):
    min(cap, first * 2**attempts), without overflow however many."""
    return min(cap, first * 2.0 ** min(max(attempts, 0), 64))


def full_jitter(attempts: int, first: float, cap: float, rng: random.Random) -> float:
    """A delay after `attempts` earlier ones, uniform in [0, ceiling]."""
    return rng.uniform(0.0, ceiling(attempts, first, cap))


def retry_delay(after_s: float | None, drawn: Callable[[], float],
                cap: float = MAX_RETRY_AFTER) -> float:
    """Seconds before trying again: the server's Retry-After (`after_s`) wins, bounded
    by `cap`; without one, the backoff's draw."""
    if after_s is not None:
        return min(max(after_s, 0.0), cap)
    return drawn()


class Backoff:
    """Exponential backoff with full jitter, counting its own attempts."""

    def __init__(self, first: float = FIRST_DELAY, cap: float = MAX_DELAY,
                 rng: random.Random | None = None) -> None:
        self.first = first
        self.cap = cap
        self.rng = rng or random.Random()
        self.attempts = 0  # delays drawn since the last reset

    def ceiling(self) -> float:
        return ceiling(self.attempts, self.first, self.cap)

    def next(self) -> float:
        delay = full_jitter(self.attempts, self.first, self.cap, self.rng)
        self.attempts += 1
        return delay

    def reset(self) -> None:
        self.attempts = 0


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (RFC 9110: delta-seconds or an
    HTTP date), at most MAX_RETRY_AFTER; None when absent or unreadable.

    Only ASCII digits are seconds (str.isdigit also takes "²" or "٣", which float()
    then refuses or misreads), and a date without a zone ("-0000") is UTC, as every
    HTTP date is, not the collector's local time."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(float(value), MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    wait = when.timestamp() - (time.time() if now is None else now)
    return min(max(wait, 0.0), MAX_RETRY_AFTER)
