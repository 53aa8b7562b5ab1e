"""processors/filters.py: the User-Agent rules and each filter's decision on one error,
and that the stage counts what it takes out. End to end: test_filters_doors.py."""

from __future__ import annotations

from typing import Any

import pytest

from model.policy import Policy, filter_settings
from model.records import Batch, ErrorEvent
from processors.filters import FiltersProcessor, crawler, legacy_browser, refused_by

CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0.0.0 Safari/537.36")


@pytest.mark.parametrize(("agent", "is_crawler", "is_legacy"), [
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", True, False),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", True, False),
    ("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0.0.0 Safari/537.36", True, False),
    ("curl/8.5.0", True, False),
    (CHROME, False, False),
    (CHROME.replace("126.0", "49.0"), False, True),
    ("Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko", False, True),
    ("Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/11.1 "
     "Safari/605.1.15", False, True),
    ("Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 "
     "Safari/605.1.15", False, False),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:60.0) Gecko/20100101 Firefox/60.0", False, True),
    ("Opera/9.80 (Windows NT 6.1) Presto/2.12.388 Version/12.18", False, True),
])
def test_user_agents(agent: str, is_crawler: bool, is_legacy: bool) -> None:
    assert (crawler(agent), legacy_browser(agent)) == (is_crawler, is_legacy)


def error(**context: Any) -> ErrorEvent:
    return ErrorEvent("f", "TypeError", "x is undefined", [], 0, release="1.0",
                      context=context or None)


@pytest.mark.parametrize(("settings", "err", "client", "refused"), [
    ({"localhost": True}, error(user={"ip_address": "{{auto}}"}), "127.0.0.1", "localhost"),
    ({"localhost": True}, error(user={"ip_address": "{{auto}}"}), "203.0.113.1", None),
    ({"localhost": True}, error(request={"url": "http://[::1]:3000/"}), None, "localhost"),
    ({"error_messages": ["typeerror: X IS *"]}, error(), None, "error_messages"),
    ({"error_messages": ["Range*"]}, error(), None, None),
    ({"releases": ["1.*"]}, error(), None, "releases"),
    ({"ip_ranges": ["203.0.113.0/24"]}, error(), "203.0.113.9", "ip_ranges"),
    ({"ip_ranges": ["203.0.113.0/24"]}, error(user={"ip_address": "198.51.100.1"}),
     "203.0.113.9", None),  # the user's address, when the event names one, decides
    ({"ip_ranges": ["2001:db8::/32"]}, error(), "203.0.113.9", None),
])
def test_each_filter(settings: dict[str, Any], err: ErrorEvent, client: str | None,
                     refused: str | None) -> None:
    assert refused_by(filter_settings(settings), err, client) == refused


def test_the_stage_takes_refused_errors_out_and_notes_them_for_counting() -> None:
    policy = Policy(filters=filter_settings({"releases": ["1.*"]}))
    kept = ErrorEvent("g", "E", "m", [], 0, release="2.0")
    batch = Batch(1, errors=[error(), kept, error()], policy=policy)
    FiltersProcessor("filters").process(batch)
    assert batch.errors == [kept]
    assert batch.filtered == {"errors": 2}
