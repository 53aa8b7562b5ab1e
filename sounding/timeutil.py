"""Time helpers: ISO 8601 in, integer epoch microseconds out."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_us() -> int:
    return time.time_ns() // 1000


def parse_iso8601_us(text: str) -> int:
    """Epoch microseconds of an ISO 8601 timestamp; one without an offset is UTC.

    Raises ValueError on anything `datetime.fromisoformat` cannot read (Python 3.11
    reads the ISO 8601 forms people send: `2026-11-22T10:00:00Z`, with fractions,
    with offsets, date only).
    """
    parsed = datetime.fromisoformat(text.strip())
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    delta = parsed - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def iso_from_us(ts_us: int) -> str:
    return datetime.fromtimestamp(ts_us / 1_000_000, tz=UTC).isoformat().replace("+00:00", "Z")
