"""Cron monitors' schedules: a monitor's configuration as Sentry's SDKs send it
(`monitor_config`), checked field by field, and when a check-in is next expected.

A schedule is a crontab (five fields, or one of the @hourly-style names) read by
cronsim in the monitor's timezone, or an interval (`value` `unit`s after the last
check-in). cronsim rather than croniter: croniter is in maintenance mode, cronsim
is small (one module, no dependency), maintained by the author of Healthchecks.io
for exactly this use (when is a job next expected), and follows Debian cron on
daylight-saving changes (a 02:30 job runs once on the day 02:30 does not exist).

Pure: no Sounding import beyond the error kinds; times are epoch microseconds.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from model.errors import InvalidInput

US = 1_000_000
MINUTE_US = 60 * US
CRONTAB, INTERVAL = "crontab", "interval"
UNITS = ("minute", "hour", "day", "week", "month", "year")
_UNIT_US = {"minute": MINUTE_US, "hour": 60 * MINUTE_US, "day": 1440 * MINUTE_US,
            "week": 7 * 1440 * MINUTE_US}
# The names cron (and Sentry) take for common schedules.
ALIASES = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
           "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
           "@hourly": "0 * * * *"}
# Sentry's defaults: a check-in is late after one minute, a run times out after 30.
DEFAULT_MARGIN_MIN = 1
DEFAULT_MAX_RUNTIME_MIN = 30
# Bounds that keep every sum of minutes an int64 of microseconds, far beyond any job.
MAX_MINUTES = 366 * 1440
MAX_THRESHOLD = 1000
MAX_INTERVAL = 10_000
CHECKIN_STATUSES = ("in_progress", "ok", "error")
# The states of a monitor and of its check-ins: a check-in is in_progress, ok,
# error, missed (recorded by the checker for one that never came) or timeout (an
# in_progress one past max_runtime).
STATES = ("ok", "in_progress", "error", "missed", "timeout")
# A monitor's slug, as Sentry's SDKs make them (lowercase letters, digits, - and _).
SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SLUG_ERROR = "must be 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit"


def slug_problem(slug: Any) -> str | None:
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        return SLUG_ERROR
    return None


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    schedule_type: str  # CRONTAB or INTERVAL
    schedule: str  # the crontab as given (aliases kept), or the interval's count
    unit: str | None = None  # an interval's unit, one of UNITS
    checkin_margin: int = DEFAULT_MARGIN_MIN  # minutes
    max_runtime: int = DEFAULT_MAX_RUNTIME_MIN  # minutes
    timezone: str = "UTC"
    failure_issue_threshold: int = 1
    recovery_threshold: int = 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        if self.schedule_type == CRONTAB:
            return f"{self.schedule} ({self.timezone})"
        count = int(self.schedule)
        return f"every {count} {self.unit}{'s' if count != 1 else ''}"


def parse_config(value: Any, field: str = "monitor_config") -> MonitorConfig:
    """A monitor's configuration from Sentry's `monitor_config` object; InvalidInput
    naming every bad field."""
    problems: list[dict[str, str]] = []

    def bad(name: str, error: str) -> None:
        problems.append({"field": f"{field}.{name}" if name else field, "error": error})

    if not isinstance(value, dict):
        raise InvalidInput("the monitor configuration is invalid",
                           [{"field": field, "error": "must be a JSON object"}])
    schedule = value.get("schedule")
    kind, text, unit = CRONTAB, "", None
    if isinstance(schedule, str):  # Sentry's older form: a crontab string alone
        schedule = {"type": CRONTAB, "value": schedule}
    if not isinstance(schedule, dict):
        bad("schedule", "must be an object with type and value")
    else:
        kind = schedule.get("type", CRONTAB)
        raw = schedule.get("value")
        if kind == CRONTAB:
            if not isinstance(raw, str) or not raw.strip():
                bad("schedule.value", "a crontab schedule needs a string such as '0 * * * *'")
            else:
                text = " ".join(raw.split())
                problem = crontab_problem(text)
                if problem:
                    bad("schedule.value", problem)
        elif kind == INTERVAL:
            count = _integer(raw)
            if count is None or not 1 <= count <= MAX_INTERVAL:
                bad("schedule.value", f"an interval needs a whole number from 1 to "
                                      f"{MAX_INTERVAL}, got {raw!r}")
            else:
                text = str(count)
            unit = schedule.get("unit")
            if unit not in UNITS:
                bad("schedule.unit", f"must be one of {', '.join(UNITS)}, got {unit!r}")
                unit = None
        else:
            bad("schedule.type", f"must be crontab or interval, got {kind!r}")
    numbers: dict[str, int] = {}
    for name, default, low, high in (
            ("checkin_margin", DEFAULT_MARGIN_MIN, 0, MAX_MINUTES),
            ("max_runtime", DEFAULT_MAX_RUNTIME_MIN, 1, MAX_MINUTES),
            ("failure_issue_threshold", 1, 1, MAX_THRESHOLD),
            ("recovery_threshold", 1, 1, MAX_THRESHOLD)):
        raw = value.get(name)
        number = default if raw is None else _integer(raw)
        if number is None or not low <= number <= high:
            bad(name, f"must be a whole number from {low} to {high}, got {raw!r}")
        else:
            numbers[name] = number
    timezone = value.get("timezone") or "UTC"
    if not isinstance(timezone, str) or zone(timezone) is None:
        bad("timezone", f"must be an IANA time zone such as Europe/Riga, got {timezone!r}")
    if problems:
        raise InvalidInput("the monitor configuration is invalid", problems)
    return MonitorConfig(kind, text, unit, timezone=timezone, **numbers)


def _integer(value: Any) -> int | None:
    """A whole number from a JSON number or a string of digits (the HTTP door's query
    parameters and Sentry's documented `"value": "2"` both send strings)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 10:
        return int(value.strip())
    return None


@lru_cache(maxsize=512)
def zone(name: str) -> ZoneInfo | None:
    if not name or len(name) > 64:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _expand(crontab: str) -> str:
    return ALIASES.get(crontab.lower(), crontab)


def crontab_problem(crontab: str) -> str | None:
    """What is wrong with a crontab, or None. Five fields only: cronsim also reads a
    seconds field, which no cron (and no Sentry SDK) has."""
    expanded = _expand(crontab)
    if len(expanded.split()) != 5:
        return (f"a crontab has five fields (minute hour day month weekday) or is one of "
                f"{', '.join(ALIASES)}; got {crontab!r}")
    try:
        CronSim(expanded, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        return f"{crontab!r} is not a valid crontab: {exc}"
    return None


def next_expected(config: MonitorConfig, after_us: int) -> int:
    """When the next check-in is due after one at `after_us`: the crontab's next
    time strictly later, or `after_us` plus the interval (months and years on the
    calendar, in the monitor's timezone)."""
    tz = zone(config.timezone) or UTC
    if config.schedule_type == CRONTAB:
        start = datetime.fromtimestamp(after_us / US, tz)
        for when in CronSim(_expand(config.schedule), start):
            at = int(when.timestamp()) * US
            if at > after_us:
                return at
        raise ValueError("a crontab without a next time")  # pragma: no cover - cronsim iterates
    count = int(config.schedule)
    unit = config.unit or "minute"
    if unit in _UNIT_US:
        return after_us + count * _UNIT_US[unit]
    start = datetime.fromtimestamp(after_us / US, tz)
    months = count * (12 if unit == "year" else 1)
    return int(_add_months(start, months).timestamp() * US)


def _add_months(when: datetime, months: int) -> datetime:
    """`when` `months` calendar months later, the day clamped to the month's last."""
    index = when.month - 1 + months
    year, month = when.year + index // 12, index % 12 + 1
    day = min(when.day, calendar.monthrange(year, month)[1])
    return when.replace(year=year, month=month, day=day) + timedelta(0)
