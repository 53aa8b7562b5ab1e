"""Time helpers: ISO 8601 in, integer epoch microseconds out.

Every time Sounding accepts lies between the epoch and 2^63 - 1 nanoseconds after
it (2262-04-11T23:47:16.854775807Z): the range of a signed 64-bit count of
nanoseconds, so that every time fits the database's BIGINT, Python's datetime and
JavaScript's Date, and every page can show it. The same range on every door.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

MAX_NS = 2**63 - 1
MAX_US = MAX_NS // 1000
RANGE_TEXT = "1970-01-01T00:00:00Z and 2262-04-11T23:47:16.854775Z"


class TimeOutOfRange(ValueError):
    """A well-formed time outside the accepted range."""


def now_us() -> int:
    return time.time_ns() // 1000


def parse_iso8601_us(text: str) -> int:
    """Epoch microseconds of an ISO 8601 timestamp; one without an offset is UTC.

    Raises ValueError on anything `datetime.fromisoformat` cannot read (Python 3.11
    reads the ISO 8601 forms people send: `2026-11-22T10:00:00Z`, with fractions,
    with offsets, date only), and on a time outside the accepted range.
    """
    parsed = datetime.fromisoformat(text.strip())
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    delta = parsed - datetime(1970, 1, 1, tzinfo=UTC)
    ts_us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if not 0 <= ts_us <= MAX_US:
        raise TimeOutOfRange(f"must be between {RANGE_TEXT}")
    return ts_us


def iso_from_us(ts_us: int) -> str:
    return datetime.fromtimestamp(ts_us / 1_000_000, tz=UTC).isoformat().replace("+00:00", "Z")
