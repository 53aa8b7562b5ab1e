"""Series keys of metric points in the wire form (storage/wire/points.py): the same
whether or not the process has made them before, and the memory of them bounded."""

from __future__ import annotations

import hashlib
from typing import Any

from storage.jsontext import dumps
from storage.wire import points
from storage.wire.points import MAX_SERIES_KEYS, series_key

PREFIX = b"requests\nsum\n1\n42\nscope\n"


def fresh(attributes: dict[str, Any]) -> tuple[bytes, str]:
    """The key as the wire form defines it, made from nothing."""
    text = dumps(dict(sorted(attributes.items())))
    return hashlib.blake2b(PREFIX + text.encode(), digest_size=16).digest(), text


def test_a_series_sent_again_has_the_key_it_had() -> None:
    attributes = {"route": "/a", "method": "GET", "status": 200}
    first = series_key(PREFIX, attributes)
    assert first == fresh(attributes)
    assert series_key(PREFIX, dict(attributes)) == first
    # The same attributes in another order are the same series.
    assert series_key(PREFIX, dict(reversed(attributes.items()))) == first
    # Another metric's series with these attributes is another series.
    assert series_key(PREFIX + b"x", attributes)[0] != first[0]


def test_values_equal_in_python_but_not_in_json_are_other_series() -> None:
    made = [series_key(PREFIX, {"v": value}) for value in (1, True, 1.0, "1")]
    assert made == [fresh({"v": value}) for value in (1, True, 1.0, "1")]
    assert len({key for key, _ in made}) == 4


def test_list_and_map_values_are_keyed_too() -> None:
    for attributes in ({"l": [1, "a"]}, {"m": {"k": True}}):
        assert series_key(PREFIX, attributes) == fresh(attributes)
        assert series_key(PREFIX, attributes) == fresh(attributes)


def test_the_memory_of_keys_is_bounded() -> None:
    for i in range(MAX_SERIES_KEYS + 10):
        series_key(PREFIX, {"i": i})
    assert 0 < len(points._SERIES_KEYS) <= MAX_SERIES_KEYS
    assert series_key(PREFIX, {"i": 3}) == fresh({"i": 3})
