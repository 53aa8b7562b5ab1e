"""receiver/sentry/bounded.py: what is kept of a free-form value, as sent or copied."""

from __future__ import annotations

import math
from typing import Any

import pytest

from receiver.sentry.bounded import FILTERED, MAX_DEPTH, kept_as_sent, plain


@pytest.mark.parametrize("value", [
    {"browser": {"name": "Chrome", "version": "126"}, "module": None},
    [{"category": "query", "message": "SELECT 1", "data": {"rows": 3}}],
])
def test_a_small_clean_value_is_kept_as_it_came(value: Any) -> None:
    assert kept_as_sent(value)
    assert plain(value) is value


@pytest.mark.parametrize(("value", "kept"), [
    # An infinite number (a body's 1e400) is one JSON cannot carry: it becomes null.
    ({"y": math.inf, "z": None}, {"y": None, "z": None}),
    ({"headers": {"Authorization": "Bearer abc", "Accept": "*/*"}},
     {"headers": {"Authorization": FILTERED, "Accept": "*/*"}}),
    ({"url": "https://x/api/1/envelope/?sentry_key=abc&v=7"},
     {"url": f"https://x/api/1/envelope/?sentry_key={FILTERED}&v=7"}),
    ([["X-Sentry-Auth", "Sentry sentry_key=abc"]], [["X-Sentry-Auth", FILTERED]]),
    ({"n": 2**70}, {"n": 2**70}),  # past 64 bits: copied, and kept
])
def test_a_value_with_anything_to_mend_is_copied_and_mended(value: Any, kept: Any) -> None:
    assert not kept_as_sent(value)
    assert plain(value) == kept


def test_a_deep_value_is_cut_at_the_depth_bound() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 3):
        deep = {"d": deep}
    assert not kept_as_sent(deep)
    kept, depth = plain(deep), 0
    while isinstance(kept, dict):
        kept, depth = kept["d"], depth + 1
    assert depth == MAX_DEPTH and kept == "[…]"
