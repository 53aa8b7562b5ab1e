"""storage/jsontext.py: `dumps_column` gives the JSON value `dumps` gives, and refuses
what it refuses, whichever of its two encoders writes it."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from typing import Any

import pytest

from storage.jsontext import dumps, dumps_column


class Text(str):
    pass


@dataclasses.dataclass
class Point:
    x: int


SAME = [
    {"a": [1, 2.5, None, True, "x\u0000y", "\u2028é😀"], "b": {"c": None}},
    {"parent_span_id": None, "trace_id": "ab"},  # a null orjson wrote itself
    [(1, None), (2, 3)],  # tuples, written as arrays by both
    {1: "an integer key", None: "a null key"},  # orjson refuses keys that are not text
    [2**70, -2**70],  # past 64 bits
    {"float": 1e-7, "big": 1e300, "neg": -0.0},
    {"text": Text("a str subclass")},
    ["\ud800"],  # a lone surrogate: written, for storable.py to refuse
    # Large enough to be looked into rather than read back whole:
    {"crumbs": [{"message": "x" * 50, "n": i} for i in range(20)],
     "contexts": {"trace": {"parent_span_id": None, "pad": "y" * 300}}},
    [{"pad": "z" * 300, "pair": (None, 1)}],
]


@pytest.mark.parametrize("value", SAME)
@pytest.mark.parametrize("by_parts", [False, True])
def test_the_same_json_value_as_dumps(value: Any, by_parts: bool) -> None:
    text = dumps_column(value, by_parts)
    assert isinstance(text, str)
    if "\ud800" in text:
        assert text == dumps(value)
    else:
        assert json.loads(text) == json.loads(dumps(value))


@pytest.mark.parametrize("value", [
    {"nan": math.nan}, [None, math.inf], {"deep": [{"x": -math.inf}], "y": None},
    {"when": datetime.datetime(2026, 1, 1)}, [Point(1)], {"set": {1, 2}},
    # An infinity deep in a large value, beside a None:
    {"crumbs": [{"message": "x" * 50, "n": i} for i in range(20)],
     "contexts": {"trace": {"parent_span_id": None, "pad": "y" * 300,
                            "deeper": [{"v": -math.inf}]}}},
])
@pytest.mark.parametrize("by_parts", [False, True])
def test_refuses_what_dumps_refuses(value: Any, by_parts: bool) -> None:
    with pytest.raises((TypeError, ValueError)) as by_dumps:
        dumps(value)
    with pytest.raises(type(by_dumps.value)):
        dumps_column(value, by_parts)


def test_by_parts_is_the_text_of_the_whole() -> None:
    value = {"a\"b": [1, None], "é": {"x": 1.5}, "": "t", "n": None}
    assert dumps_column(value, by_parts=True) == dumps_column(value) == dumps(value)
