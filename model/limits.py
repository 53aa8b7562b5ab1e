"""What a project may send: the categories a limit counts, a limit's settings, and
the token bucket's arithmetic, pure (no clock, no store), shared by the bucket held
in memory (runtime/ratelimit.py) and the one shared in the database
(storage/limits/leases.py), so that both count the same way.

A limit is a rate with a burst (a token bucket: `burst` tokens at most, refilled at
`rate` a second; a request takes one token per record, or per byte) and an optional
quota per UTC day or month. A request is let through while its bucket has a token
left, even if it takes more than are left (the bucket goes into debt and refills from
there): a batch larger than the burst is not refused forever, and over time the rate
holds.
"""

from __future__ import annotations

import calendar
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The categories, in Sounding's words: one per kind of record, and the request bytes.
ERROR = "error"  # error events: the errors doors, Sentry events
SPAN = "span"  # spans: OTLP traces, Sentry transactions and their spans
LOG = "log"  # OTLP log records
METRIC = "metric"  # OTLP metric points, the requests door's request metrics
SESSION = "session"  # Sentry session updates and aggregates
BYTES = "bytes"  # bytes of request bodies, as received
CATEGORIES = (ERROR, SPAN, LOG, METRIC, SESSION, BYTES)

# A Batch's record lists, and the category each counts under. Deploys are not limited.
BATCH_FIELDS = {"errors": ERROR, "spans": SPAN, "logs": LOG, "metrics": METRIC,
                "requests": METRIC}



def unfiltered(counts: Mapping[str, int], filtered: Mapping[str, int]) -> dict[str, int]:
    """`counts` (per category) less the records an inbound filter took out (per Batch
    field, Batch.filtered): what was accepted of them."""
    left = dict(counts)
    for name, n in filtered.items():
        category = BATCH_FIELDS.get(name)
        if category is not None and category in left:
            left[category] = max(0, left[category] - n)
    return left


# Sentry's data categories for each (X-Sentry-Rate-Limits): an SDK stops sending
# exactly those. A transaction becomes spans here, so limiting spans limits both.
SENTRY_CATEGORIES = {ERROR: ("error", "default", "security"), SPAN: ("transaction", "span"),
                     LOG: ("log_item",), SESSION: ("session",), METRIC: ("trace_metric",)}

PERIODS = ("day", "month")

# The usage outcomes (storage/limits/usage.py counts records under these).
ACCEPTED = "accepted"  # committed: answered 2xx
FILTERED = "filtered"  # taken out by an inbound filter
RATE_LIMITED = "rate_limited"  # over the project's rate
OVER_QUOTA = "over_quota"  # over the project's daily or monthly quota
SHED = "shed"  # the collector was saturated and the project above its fair share
INVALID = "invalid"  # a door could not read it
DROPPED = "dropped"  # dropped after it was read (the store could not hold it)
CLIENT_DISCARDED = "client_discarded"  # an SDK's client report: dropped before sending
OUTCOMES = (ACCEPTED, FILTERED, RATE_LIMITED, OVER_QUOTA, SHED, INVALID, DROPPED,
            CLIENT_DISCARDED)


@dataclass(frozen=True, slots=True)
class Limit:
    """One category's limit for one project. `rate` 0: no rate limit (only the
    quota); `quota` 0: none."""

    rate: float = 0.0  # tokens a second
    burst: float = 0.0  # the bucket's size; at least one second of `rate`
    quota: int = 0  # per `period`
    period: str = "day"

    @property
    def limited(self) -> bool:
        return self.rate > 0 or self.quota > 0

    def as_json(self) -> dict[str, Any]:
        return {"rate": self.rate, "burst": self.burst, "quota": self.quota,
                "period": self.period}


Limits = Mapping[str, Limit]  # category: its limit


def parse_limit(where: str, raw: Any) -> Limit:
    """A limit from its configuration or API form, `{rate, burst, quota, period}`;
    ValueError naming the bad key. The burst defaults to one second of the rate."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be a mapping of rate, burst, quota and period")
    unknown = sorted(set(raw) - {"rate", "burst", "quota", "period"})
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; "
                         "the keys are rate, burst, quota and period")
    numbers: dict[str, float] = {}
    for key in ("rate", "burst", "quota"):
        value = raw.get(key, 0)
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or value < 0 or value > 1e15):
            raise ValueError(f"{where}.{key} must be a number >= 0, got {value!r}")
        numbers[key] = float(value)
    period = raw.get("period", "day")
    if period not in PERIODS:
        raise ValueError(f"{where}.period must be one of {', '.join(PERIODS)}, got {period!r}")
    rate = numbers["rate"]
    burst = max(numbers["burst"], rate, 1.0) if rate > 0 else 0.0
    return Limit(rate, burst, int(numbers["quota"]), str(period))


def parse_limits(where: str, raw: Any) -> dict[str, Limit]:
    """{category: Limit} from `{category: {rate, ...}}`; ValueError naming the bad key."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be a mapping of categories "
                         f"({', '.join(CATEGORIES)}) to limits")
    parsed: dict[str, Limit] = {}
    for category, value in raw.items():
        if category not in CATEGORIES:
            raise ValueError(f"{where}: unknown category {category!r}; "
                             f"the categories are {', '.join(CATEGORIES)}")
        parsed[str(category)] = parse_limit(f"{where}.{category}", value)
    return parsed


def refill(tokens: float, last: float, now: float, limit: Limit) -> float:
    """A bucket's tokens at `now`, `last` being when it held `tokens` (seconds)."""
    return min(limit.burst, tokens + max(0.0, now - last) * limit.rate)


def grant(tokens: float, want: float, need: float, limit: Limit) -> float:
    """How many tokens a bucket holding `tokens` lends to someone wanting `want` to
    cover `need` now: nothing while the bucket holds less than one whole token (or is
    in debt); else `want`, or what is left if less, but never less than `need` (the
    bucket goes into debt)."""
    if limit.rate <= 0:
        return want
    if tokens < min(1.0, need):
        return 0.0
    return max(min(want, tokens), need)


def seconds_to_refill(tokens: float, need: float, limit: Limit) -> float:
    """Seconds until a bucket holding `tokens` lends again (a client is told at least
    one: Retry-After counts whole seconds)."""
    if limit.rate <= 0:
        return 1.0
    return max(0.001, (min(1.0, need) - tokens) / limit.rate)


def period_start(now_s: float, period: str) -> int:
    """The UTC day or month `now_s` (epoch seconds) falls in, as its first second."""
    t = time.gmtime(now_s)
    if period == "month":
        return calendar.timegm((t.tm_year, t.tm_mon, 1, 0, 0, 0))
    return calendar.timegm((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0))


def period_end(now_s: float, period: str) -> int:
    """The first second after the UTC day or month `now_s` falls in."""
    t = time.gmtime(now_s)
    if period == "month":
        year, month = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
        return calendar.timegm((year, month, 1, 0, 0, 0))
    return period_start(now_s, "day") + 86400


@dataclass(slots=True)
class Grant:
    """What a lender lent: `tokens` (0: none), else why not (`outcome`) and for how
    long (`retry_after`, seconds)."""

    tokens: float
    retry_after: float = 0.0
    outcome: str = RATE_LIMITED
    # The bucket's tokens once this was lent (negative: in debt): a door can then
    # tell from memory, before a body, whether the bucket could lend again.
    left: float = 0.0


@dataclass(slots=True)
class Bucket:
    tokens: float
    last: float
    period: int = 0  # the quota's period (its first second)
    used: int = 0  # of the quota in that period


def lend_bucket(bucket: Bucket, limit: Limit, want: float, need: float, now: float
                ) -> Grant:
    """The one lending rule, for a bucket read from memory or from a row."""
    if limit.quota > 0:
        period = period_start(now, limit.period)
        if period != bucket.period:
            bucket.period, bucket.used = period, 0
        left = limit.quota - bucket.used
        if left <= 0:
            return Grant(0.0, period_end(now, limit.period) - now, OVER_QUOTA)
        want = min(want, left)
        need = min(need, left)
    bucket.tokens = refill(bucket.tokens, bucket.last, now, limit)
    bucket.last = now
    granted = grant(bucket.tokens, want, need, limit)
    if granted <= 0:
        return Grant(0.0, seconds_to_refill(bucket.tokens, need, limit), left=bucket.tokens)
    if limit.rate > 0:
        bucket.tokens -= granted
    bucket.used += math.ceil(granted)
    return Grant(granted, left=bucket.tokens)


def sentry_categories(categories: tuple[str, ...]) -> str:
    """The `categories` part of X-Sentry-Rate-Limits: Sentry's names, `;`-separated."""
    names: list[str] = []
    for category in categories:
        names.extend(SENTRY_CATEGORIES.get(category, ()))
    return ";".join(names)
