"""receiver/sentry/bounded.py: what is kept of a free-form value, as sent or copied."""

from __future__ import annotations

import math
from typing import Any

import pytest

from model.secretnames import EXACT, PARTS
from receiver.sentry.bounded import (
    FILTERED,
    MAX_DEPTH,
    MAX_STRING,
    kept_as_sent,
    plain,
    plain_items,
)


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


@pytest.mark.parametrize("name", sorted({*PARTS, *EXACT, "my_password", "cookie_jar",
                                          "x-auth-token", "sessionid", "set-cookie"}))
def test_every_secret_name_and_its_dashed_form_is_suspect_and_filtered(name: str) -> None:
    for form in {name, name.replace("_", "-"), name.upper()}:
        assert not kept_as_sent({form: "x"}), form
        assert not kept_as_sent([[form, "x"]]), form
        assert plain({form: "x"}) == {form: FILTERED}, form


@pytest.mark.parametrize("name", ["auth_mode", "author", "x_api", "pw", "key", "monkey"])
def test_a_name_that_is_no_secret_is_kept(name: str) -> None:
    assert plain({name: "x"}) == {name: "x"}


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"d": value}
    return value


CRUMB = {"category": "query", "message": "SELECT 1", "data": {"rows": 3}}


@pytest.mark.parametrize("items", [
    [CRUMB] * 40,  # runs kept as sent, one after another
    [CRUMB] * 5 + [{"data": {"password": "hunter2"}}] + [CRUMB] * 5,  # one secret
    [CRUMB, {"y": math.inf}, {"z": None}],  # an infinity beside a null
    [CRUMB, _deep(MAX_DEPTH), _deep(MAX_DEPTH + 1)],  # one level too deep
    [CRUMB, {"m": "x" * (MAX_STRING // 2)}, {"m": "y" * (MAX_STRING // 2)}],  # too big together
    [CRUMB, {"url": "https://x/?sentry_key=abc"}],
    ["text", 2**70, CRUMB],
])
def test_items_are_kept_as_each_would_be_alone(items: list[Any]) -> None:
    kept = plain_items(items)
    assert kept == [plain(item) for item in items]
    assert [k is i for k, i in zip(kept, items, strict=True)] == \
        [plain(i) is i for i in items]
