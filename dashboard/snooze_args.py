"""A snooze's conditions as the dashboard receives them: from a form (the group page's
Snooze form and the error list's bulk Snooze) or from the API's JSON. Every bad value
is a 400 naming it, raised before anything is written.

A snooze ends at the first of its conditions (storage/writer/snooze.py): a time (given
as a duration from now, or as a UTC time that must lie ahead), a number of more
events, or more than a number of events in an hour.
"""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError

from dashboard import format as fmt
from dashboard.base import DashboardHandler
from model.timeutil import parse_iso8601_us
from storage.groups.status import Snooze

HOUR_US = 3_600_000_000
MAX_HOURS = 24 * 366
MAX_COUNT = 10**12  # storage/groups/status.py's Snooze bound for events and per_hour
JSON_FIELDS = ("until_us", "hours", "events", "per_hour")


def _ahead(until_us: int, now_us: int, name: str) -> int:
    if until_us <= now_us:
        raise HTTPError(400, f"{name} is in the past ({fmt.time_us(until_us)}; now is "
                             f"{fmt.time_us(now_us)}): a snooze ends at a later time")
    return until_us


def _one_end(hours: int | None, until_us: int | None, now_us: int, names: str) -> int | None:
    if hours is not None and until_us is not None:
        raise HTTPError(400, f"give one end time for a snooze: {names}, not both")
    return until_us if hours is None else now_us + hours * HOUR_US


def snooze_form(handler: DashboardHandler) -> Snooze | None:
    """`snooze_hours` (ignore for that long) or `snooze_until` (a time ahead, as a
    datetime-local input sends it, read as UTC like every time on the pages),
    `snooze_events` (until that many more events), `snooze_per_hour` (until an hour
    counts more). Empty ones are no condition; none at all is no snooze."""
    hours = handler.int_arg("snooze_hours", None, 1, MAX_HOURS)
    events = handler.int_arg("snooze_events", None, 1, MAX_COUNT)
    per_hour = handler.int_arg("snooze_per_hour", None, 1, MAX_COUNT)
    until_us = None
    raw = handler.arg("snooze_until")
    if raw is not None:
        try:
            until_us = parse_iso8601_us(raw)
        except ValueError as exc:
            raise HTTPError(400, f"'snooze_until' must be a time like 2026-11-24T18:00 "
                                 f"(UTC), got {raw!r}") from exc
        _ahead(until_us, handler.now_us, "'snooze_until'")
    until_us = _one_end(hours, until_us, handler.now_us, "'snooze_hours' or 'snooze_until'")
    snooze = Snooze(until_us, events, per_hour)
    return snooze if snooze.any() else None


def snooze_json(raw: Any, now_us: int) -> Snooze | None:
    """`"snooze": {"until_us": …, "hours": …, "events": …, "per_hour": …}` (any of
    them; until_us or hours, not both; until_us ahead of now)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not raw or set(raw) - set(JSON_FIELDS):
        raise HTTPError(400, "snooze must be an object with until_us (or hours), events "
                             "and/or per_hour")
    for name in JSON_FIELDS:
        value = raw.get(name)
        if value is not None and (type(value) is not int or not 0 < value < 2**63):
            raise HTTPError(400, f"snooze {name} must be a positive integer")
    hours = raw.get("hours")
    if hours is not None and hours > MAX_HOURS:
        raise HTTPError(400, f"snooze hours must be at most {MAX_HOURS}")
    until_us = raw.get("until_us")
    if until_us is not None:
        _ahead(until_us, now_us, "snooze until_us")
    try:
        return Snooze(_one_end(hours, until_us, now_us, "until_us or hours"),
                      raw.get("events"), raw.get("per_hour"))
    except ValueError as exc:
        raise HTTPError(400, str(exc)) from exc


def bulk_snooze(handler: DashboardHandler) -> Snooze | None:
    """The error list's bulk Snooze button (`action=snooze`): its conditions, of which
    it needs one; None when another button was pressed (the snooze fields, part of the
    same form, are then not read)."""
    if handler.get_argument("action", "") != "snooze":
        return None
    snooze = snooze_form(handler)
    if snooze is None:
        raise HTTPError(400, "Snooze needs a condition: hours, a time (snooze_until), more "
                             "events (snooze_events) or events an hour (snooze_per_hour)")
    return snooze
