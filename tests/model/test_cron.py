"""Cron monitors' configuration and schedules (model/cron.py): every bad field named,
crontabs read by cronsim in the monitor's time zone, intervals on the calendar."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from model import cron
from model.errors import InvalidInput

US = 1_000_000


def at(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * US)


def config(**fields: Any) -> cron.MonitorConfig:
    return cron.parse_config({"schedule": {"type": "crontab", "value": "0 3 * * *"}, **fields})


def test_a_configuration_as_the_sdks_send_it() -> None:
    parsed = cron.parse_config({
        "schedule": {"type": "interval", "value": "2", "unit": "hour"},
        "checkin_margin": 5, "max_runtime": 30.0, "timezone": "Europe/Riga",
        "failure_issue_threshold": 3, "recovery_threshold": 2, "owner": "team:ops"})
    assert parsed == cron.MonitorConfig("interval", "2", "hour", 5, 30, "Europe/Riga", 3, 2)
    assert parsed.describe() == "every 2 hours"
    assert cron.MonitorConfig(**parsed.as_dict()) == parsed


def test_defaults_are_sentrys() -> None:
    parsed = cron.parse_config({"schedule": "@daily"})  # the older form: a crontab string
    assert (parsed.schedule_type, parsed.schedule, parsed.checkin_margin, parsed.max_runtime,
            parsed.timezone) == ("crontab", "@daily", 1, 30, "UTC")


@pytest.mark.parametrize(("value", "field"), [
    ({"schedule": {"type": "crontab", "value": "61 * * * *"}}, "m.schedule.value"),
    ({"schedule": {"type": "crontab", "value": "0 0 * * * *"}}, "m.schedule.value"),
    ({"schedule": {"type": "crontab", "value": ""}}, "m.schedule.value"),
    ({"schedule": {"type": "interval", "value": 0, "unit": "hour"}}, "m.schedule.value"),
    ({"schedule": {"type": "interval", "value": 1.5, "unit": "hour"}}, "m.schedule.value"),
    ({"schedule": {"type": "interval", "value": 1, "unit": "fortnight"}}, "m.schedule.unit"),
    ({"schedule": {"type": "weekly"}}, "m.schedule.type"),
    ({}, "m.schedule"),
    ({"schedule": "@daily", "timezone": "Mars/Olympus"}, "m.timezone"),
    ({"schedule": "@daily", "checkin_margin": -1}, "m.checkin_margin"),
    ({"schedule": "@daily", "max_runtime": 0}, "m.max_runtime"),
    ({"schedule": "@daily", "failure_issue_threshold": True}, "m.failure_issue_threshold"),
    ({"schedule": "@daily", "recovery_threshold": "many"}, "m.recovery_threshold"),
])
def test_every_bad_field_is_named(value: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        cron.parse_config(value, "m")
    assert field in [d["field"] for d in caught.value.details]


def test_several_bad_fields_in_one_answer() -> None:
    with pytest.raises(InvalidInput) as caught:
        cron.parse_config({"schedule": {"type": "interval", "value": -1, "unit": "eon"},
                           "timezone": 7}, "m")
    assert {d["field"] for d in caught.value.details} == {
        "m.schedule.value", "m.schedule.unit", "m.timezone"}


def test_a_crontab_is_due_at_its_next_time_strictly_later() -> None:
    c = config()
    assert cron.next_expected(c, at("2026-11-20T10:00:00+00:00")) == at("2026-11-21T03:00:00+00:00")
    assert cron.next_expected(c, at("2026-11-21T03:00:00+00:00")) == at("2026-11-22T03:00:00+00:00")
    hourly = config(schedule="@hourly")
    assert cron.next_expected(hourly, at("2026-11-20T10:59:59+00:00")) == at(
        "2026-11-20T11:00:00+00:00")


def test_a_crontab_in_a_time_zone_across_daylight_saving() -> None:
    c = config(schedule={"type": "crontab", "value": "30 2 * * *"}, timezone="Europe/Riga")
    # Riga moves from 03:00 to 04:00 on 2026-03-29: 02:30 exists (EET, UTC+2) that night;
    # the next morning it is EEST (UTC+3).
    assert cron.next_expected(c, at("2026-03-28T12:00:00+00:00")) == at(
        "2026-03-29T00:30:00+00:00")
    assert cron.next_expected(c, at("2026-03-29T12:00:00+00:00")) == at(
        "2026-03-29T23:30:00+00:00")


def test_intervals_add_their_unit_months_on_the_calendar() -> None:
    def every(value: int, unit: str) -> cron.MonitorConfig:
        return cron.parse_config({"schedule": {"type": "interval", "value": value,
                                               "unit": unit}})
    start = at("2026-01-31T08:00:00+00:00")
    assert cron.next_expected(every(1, "minute"), start) == start + 60 * US
    assert cron.next_expected(every(2, "week"), start) == start + 14 * 86400 * US
    assert cron.next_expected(every(1, "month"), start) == at("2026-02-28T08:00:00+00:00")
    assert cron.next_expected(every(1, "year"), start) == at("2027-01-31T08:00:00+00:00")


@pytest.mark.parametrize("slug", ["nightly-report", "a", "job_1.v2", "A" * 64])
def test_slugs(slug: str) -> None:
    assert cron.slug_problem(slug) is None


@pytest.mark.parametrize("slug", ["", "-x", "a b", "a/b", "A" * 65, 7, None, "é"])
def test_bad_slugs(slug: Any) -> None:
    assert cron.slug_problem(slug) == cron.SLUG_ERROR
