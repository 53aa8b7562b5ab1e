"""Time ranges as they appear in URLs: `range=1h|24h|7d|30d`, or `range=custom`
with `from` and `to` (ISO 8601, UTC when no offset is given), so a view can be shared."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from model.timeutil import parse_iso8601_us

PRESETS = {"1h": 3600, "24h": 86_400, "7d": 7 * 86_400, "30d": 30 * 86_400}
LABELS = {"1h": "Last hour", "24h": "24 hours", "7d": "7 days", "30d": "30 days",
          "custom": "Custom"}
# Chart steps, smallest first; a range takes the smallest giving at most MAX_POINTS.
STEPS = (60, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400)
MAX_POINTS = 240
# The cookie that remembers the user's last preset: a preference, not server state
# (the URL still wins over it).
COOKIE = "sounding_range"
MAX_CUSTOM_SECONDS = 400 * 86_400
# What a custom range may cover: the times the doors accept, from the Unix epoch to
# the last second whose nanoseconds fit in 64 bits (spans are kept in nanoseconds).
MIN_S = 0  # 1970-01-01T00:00:00Z
MAX_S = (2**63 - 1) // 1_000_000_000  # 2262-04-11T23:47:16Z
INT64_MAX = 2**63 - 1


class RangeError(ValueError):
    """A range in the URL that cannot be read; the message names the parameter."""


@dataclass(frozen=True)
class TimeRange:
    key: str  # a preset name, or "custom"
    start_s: int  # inclusive, a multiple of step_s
    end_s: int  # exclusive, a multiple of step_s
    step_s: int

    @property
    def start_us(self) -> int:
        return self.start_s * 1_000_000

    @property
    def end_us(self) -> int:
        return self.end_s * 1_000_000

    @property
    def start_ns(self) -> int:
        return self.start_s * 1_000_000_000

    @property
    def end_ns(self) -> int:
        # A range ending at MAX_S is rounded up to a whole step, past what 64 bits hold.
        return min(self.end_s * 1_000_000_000, INT64_MAX)

    @property
    def from_text(self) -> str:
        """The start as a datetime-local input shows it (UTC)."""
        return _iso(self.start_s)

    @property
    def to_text(self) -> str:
        return _iso(self.end_s)

    def params(self) -> dict[str, str]:
        """The URL parameters that give this range back."""
        if self.key != "custom":
            return {"range": self.key}
        return {"range": "custom", "from": _iso(self.start_s), "to": _iso(self.end_s)}


def _iso(ts_s: int) -> str:
    return datetime.fromtimestamp(ts_s, tz=UTC).strftime("%Y-%m-%dT%H:%M")


def step_for(seconds: int) -> int:
    for step in STEPS:
        if seconds / step <= MAX_POINTS:
            return step
    return STEPS[-1]


def default_key(newest_s: int | None, now_s: int, remembered: str | None,
                fallback: str) -> str:
    """The preset a page opens with when its URL names none: the user's last choice
    (remembered), else the smallest preset that holds the project's newest data, so
    an hour of fresh data is not a sliver at the right edge of a week; else (no data,
    or none in 30 days) the page's own default."""
    if remembered in PRESETS:
        return remembered
    if newest_s is None:
        return fallback
    age = now_s - newest_s
    for key, seconds in PRESETS.items():  # smallest first
        if age < seconds:
            return key
    return fallback


def parse(range_arg: str | None, from_arg: str | None, to_arg: str | None, now_s: int,
          default: str = "24h") -> TimeRange:
    key = (range_arg or default).strip()
    if key in PRESETS:
        seconds = PRESETS[key]
        step = step_for(seconds)
        # Align to the step, ending with the bucket that holds now, so buckets stay
        # put from one load to the next.
        end = -(-(now_s + 1) // step) * step
        start = end - -(-seconds // step) * step
        return TimeRange(key, start, end, step)
    if key != "custom":
        raise RangeError(f"range must be one of {', '.join([*PRESETS, 'custom'])}")
    bounds = []
    for name, value in (("from", from_arg), ("to", to_arg)):
        if not value:
            raise RangeError(f"a custom range needs '{name}' (ISO 8601, e.g. 2026-11-20T10:00)")
        try:
            at_us = parse_iso8601_us(value)
        except ValueError as exc:
            raise RangeError(f"'{name}' is not an ISO 8601 time: {value!r}") from exc
        if not MIN_S * 1_000_000 <= at_us <= MAX_S * 1_000_000:
            raise RangeError(f"'{name}' must be between 1970-01-01T00:00:00Z and "
                             f"2262-04-11T23:47:16Z, got {value!r}")
        bounds.append(at_us // 1_000_000)
    start, end = bounds
    if end <= start:
        raise RangeError("'to' must be later than 'from'")
    if end - start > MAX_CUSTOM_SECONDS:
        raise RangeError("a custom range may span at most 400 days")
    step = step_for(end - start)
    return TimeRange("custom", start // step * step, -(-end // step) * step, step)
