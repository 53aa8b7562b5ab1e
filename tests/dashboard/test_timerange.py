"""Time ranges in URLs: presets aligned to their step, custom ranges, clear errors."""

from __future__ import annotations

import pytest

from dashboard.timerange import MAX_POINTS, RangeError, default_key, parse

NOW = 1_795_168_800 + 1234  # 2026-11-20T10:20:34Z


@pytest.mark.parametrize(("key", "seconds"), [("1h", 3600), ("24h", 86_400),
                                              ("7d", 604_800), ("30d", 2_592_000)])
def test_presets_end_with_the_bucket_holding_now(key: str, seconds: int) -> None:
    tr = parse(key, None, None, NOW)
    assert tr.key == key and tr.params() == {"range": key}
    assert tr.start_s % tr.step_s == 0 and tr.end_s % tr.step_s == 0
    assert tr.end_s - tr.step_s <= NOW < tr.end_s
    assert seconds <= tr.end_s - tr.start_s < seconds + tr.step_s
    assert (tr.end_s - tr.start_s) / tr.step_s <= MAX_POINTS


def test_default_and_custom_ranges_round_trip_through_the_url() -> None:
    assert parse(None, None, None, NOW, default="7d").key == "7d"
    tr = parse("custom", "2026-11-18T06:00", "2026-11-19T06:00+00:00", NOW)
    assert (tr.start_s, tr.end_s) == (1_794_981_600, 1_795_068_000)
    again = parse(*(tr.params()[k] for k in ("range", "from", "to")), NOW)
    assert again == tr


@pytest.mark.parametrize(("args", "problem"), [
    (("week", None, None), "range must be one of"),
    (("custom", None, "2026-11-19T06:00"), "needs 'from'"),
    (("custom", "yesterday", "2026-11-19T06:00"), "'from' is not an ISO 8601"),
    (("custom", "2026-11-19T06:00", "2026-11-18T06:00"), "later than"),
    (("custom", "2020-01-01", "2026-01-01"), "at most 400 days"),
])
def test_unreadable_ranges_name_the_problem(args: tuple[str | None, ...], problem: str) -> None:
    with pytest.raises(RangeError, match=problem):
        parse(args[0], args[1], args[2], NOW)


@pytest.mark.parametrize(("age_s", "key"), [
    (40 * 60, "1h"), (0, "1h"), (-120, "1h"),  # a clock a little ahead: still the hour
    (3600, "24h"), (5 * 3600, "24h"), (3 * 86_400, "7d"), (20 * 86_400, "30d")])
def test_the_default_is_the_smallest_preset_holding_the_newest_data(age_s: int,
                                                                      key: str) -> None:
    assert default_key(NOW - age_s, NOW, None, "7d") == key


def test_no_data_or_none_in_30_days_keeps_the_page_default() -> None:
    assert default_key(None, NOW, None, "24h") == "24h"
    assert default_key(NOW - 31 * 86_400, NOW, None, "7d") == "7d"


def test_a_remembered_preset_comes_before_the_data_and_a_bad_one_is_ignored() -> None:
    assert default_key(NOW - 60, NOW, "30d", "7d") == "30d"
    assert default_key(NOW - 60, NOW, "custom", "7d") == "1h"
    assert default_key(None, NOW, "<script>", "24h") == "24h"
