"""How numbers and times read on the pages. Times are shown in UTC, as charts are."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from storage.queries.logs import severity_name

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _datetime(ts_us: int) -> datetime | None:
    """The UTC time of epoch microseconds, or None outside years 1-9999 (a stored row
    may hold any 64-bit value). Integer arithmetic: no float rounding at the edges."""
    try:
        return EPOCH + timedelta(microseconds=ts_us)
    except OverflowError:
        return None


def time_us(ts_us: int | None) -> str:
    if ts_us is None:
        return "\u2014"
    at = _datetime(ts_us)
    if at is None:
        return f"out of calendar range ({ts_us} \u00b5s)"
    # isoformat, not strftime: strftime writes year 1 as "1".
    return at.isoformat(" ", "seconds").replace("+00:00", " UTC")


def time_ns(ts_ns: int) -> str:
    """To the microsecond: log records of one second are told apart."""
    at = _datetime(ts_ns // 1000)
    if at is None:
        return f"out of calendar range ({ts_ns} ns)"
    return at.isoformat(" ", "microseconds").replace("+00:00", " UTC")


def severity(number: int, text: str = "") -> str:
    """What the sender called it, else the name of its number, else "—"."""
    return text or severity_name(number) or "\u2014"


def severity_class(number: int) -> str:
    """trace, debug, info, warn, error, fatal, or unset: for the badge's colour."""
    name = severity_name(number).rstrip("234")
    return name.lower() or "unset"


def iso_us(ts_us: int) -> str:
    """For a <time datetime=...>; empty for a time no calendar date can show."""
    at = _datetime(ts_us)
    return "" if at is None else at.isoformat().replace("+00:00", "Z")


def ago(ts_us: int | None, now_us: int) -> str:
    if ts_us is None:
        return ""
    seconds = max(0, (now_us - ts_us) // 1_000_000)
    for unit, size in (("d", 86_400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


def duration_ms(ms: float | None) -> str:
    if ms is None:
        return "\u2014"
    if ms >= 10_000:
        return f"{ms / 1000:.1f} s"
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 1 or ms == 0:
        return f"{ms:.1f} ms"
    return f"{ms * 1000:.0f} \u00b5s"


def duration_ns(ns: int) -> str:
    return duration_ms(ns / 1_000_000)


def pct(rate: float | None) -> str:
    return "\u2014" if rate is None else f"{rate * 100:.1f}%"


def number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "\u2014"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.{digits}f}"


def snooze(group: Any) -> str:
    """What ends a snoozed group's snooze, the first of them; "" for a group that is not
    snoozed (not ignored, or ignored for good). `group`: storage/queries/errors.Group."""
    if group.status != "ignored":
        return ""
    ends = []
    if group.snooze_until_us is not None:
        ends.append(time_us(group.snooze_until_us))
    if group.snooze_count is not None:
        ends.append(f"{number(group.snooze_count)} events in all")
    if group.snooze_per_hour is not None:
        ends.append(f"more than {number(group.snooze_per_hour)} in an hour")
    return ", or ".join(ends)


def change(before: float | None, after: float | None) -> str:
    """The relative change, or the absolute one when there was nothing before."""
    if before is None or after is None:
        return "\u2014"
    if before == 0:
        return "no change" if after == 0 else "new"
    return f"{(after - before) / before * 100:+.0f}%"


def rate_change(before: float | None, after: float | None) -> str:
    """Error rates change in percentage points: 1% to 3% is +2.0 pp."""
    if before is None or after is None:
        return "\u2014"
    return f"{(after - before) * 100:+.1f} pp"


def window(seconds: int) -> str:
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds >= 60:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def pretty_json(value: Any) -> str:
    """For a <pre>: the template escapes it."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def compact_json(value: Any) -> str:
    """One line, for a list row: the template escapes it."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def range_around_ns(start_ns: int, end_ns: int | None = None, margin_s: int = 60
                    ) -> dict[str, str]:
    """URL parameters of a custom time range holding [start_ns, end_ns] with a margin:
    to open the Logs page on a trace's or a record's time. Whole minutes, UTC."""
    start_s = max(start_ns // 1_000_000_000 - margin_s, 0) // 60 * 60
    end_s = -(-((end_ns if end_ns is not None else start_ns) // 1_000_000_000 + margin_s
               + 1) // 60) * 60
    if end_s - start_s > 399 * 86_400:  # past what a custom range may span: the start
        end_s = start_s + 2 * margin_s + 60

    def text(ts_s: int) -> str:
        at = _datetime(ts_s * 1_000_000)
        return "" if at is None else at.strftime("%Y-%m-%dT%H:%M")
    return {"range": "custom", "from": text(start_s), "to": text(end_s)}
