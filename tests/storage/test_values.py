"""storage/queries/values.py: whatever a JSON column holds, it reads as a value the
pages and the read API can show."""

from __future__ import annotations

import json

from storage.queries.values import MAX_DEPTH, TOO_DEEP, UNREADABLE, finite, load, showable


def depth(value: object) -> int:
    level = 0
    while isinstance(value, (dict, list)):
        value = next(iter(value.values())) if isinstance(value, dict) else value[0]
        level += 1
    return level


def test_nesting_is_cut_at_the_limit_with_a_marker() -> None:
    deep = load('{"a":' * 600 + "1" + "}" * 600)
    assert depth(deep) == MAX_DEPTH
    assert json.dumps(deep).count(TOO_DEEP) == 1
    assert load("[" * 100_000 + "]" * 100_000) is UNREADABLE  # past the parser's stack
    shallow = {"a": [1, {"b": 2}]}
    assert showable(shallow) == shallow


def test_non_finite_numbers_are_named_and_the_rest_is_kept() -> None:
    assert load('{"x": NaN, "y": Infinity, "z": -1e400, "n": 1.5, "s": "NaN"}') == {
        "x": "NaN", "y": "Infinity", "z": "-Infinity", "n": 1.5, "s": "NaN"}
    assert finite({"a": [float("inf"), (float("nan"),)], "b": 2}) == {
        "a": ["Infinity", ["NaN"]], "b": 2}


def test_text_that_is_not_json_is_unreadable() -> None:
    for text in ("not json {", "", "1" * 5000, '{"a": 1} trailing'):
        assert load(text) is UNREADABLE, text
    assert load(None) is None
    assert load('"a string"') == "a string"
