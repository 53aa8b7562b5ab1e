"""Odd values: the edges that broke Sounding before (issue 9) and any value a hostile
client might put where another was expected, drawn with `weighted` choices."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.strategies.raw import BODY_MAX_DEPTH, RAW_TOKENS, VALUE_MAX_DEPTH, nested_raw


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Like st.one_of, with weights; one_of itself leans hard towards its first branch,
    which would leave the later ones (the interesting ones) nearly untried."""
    branches = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(branches).flatmap(lambda strategy: strategy)


def uniform(*strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return weighted(*((1, strategy) for strategy in strategies))


EDGE_INTS = [0, -1, 1, 2**31 - 1, 2**31, -(2**31) - 1, 2**32, 2**53 + 1, 2**63 - 1, 2**63,
             -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**22, -(10**30)]
EDGE_FLOATS = [0.5, -0.0, 1e22, 1.7976931348623157e308, 5e-324, 1e300, -1e300,
               float("nan"), float("inf"), float("-inf")]
EDGE_TIMES = [
    "9999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "1677-09-21T00:12:43.145224Z",
    "2262-04-11T23:47:16.854775Z", "2262-04-11T23:47:16.854776Z", "2262-04-12",
    "2026-02-30T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:00:00-23:59",
    "2026-11-21T10:00:00+24:00", "2026-11-21", "2026-W47", "20261121T100000Z", "",
    "2026-11-21T10:00:00.123456789Z", "now", "１９７０-01-01",
]
EDGE_STRINGS = ["", " ", "\t\n", "\x00", "\x1f\x7f", "\u2028\u2029", "\ufeff", "\ud800",
                "a\udfffb", "😀" * 3, "\u0301", "<script>alert(1)</script>", "%00", "../../x",
                "NaN", "Infinity", "9223372036854775808", "-1", "1e400", "0x10", "null"]


@cache
def long_strings() -> st.SearchStrategy[str]:
    return st.sampled_from([256, 4096, 70_000]).map(lambda n: "x" * n)


@cache
def odd_text() -> st.SearchStrategy[str]:
    # Any code point, lone surrogates too: json.dumps writes them as \ud800 escapes.
    return st.text(weighted((3, st.characters()),
                            (1, st.sampled_from(["\ud800", "\udfff", "\x00", "\u2028"]))),
                   max_size=40)


@cache
def nested_values(max_depth: int) -> st.SearchStrategy[Any]:
    """A value nested exactly `depth` levels, for a depth drawn around the limits."""
    return st.tuples(st.sampled_from([max_depth - 1, max_depth, max_depth + 1, 100, 600]),
                     st.sampled_from(["list", "dict"])).map(lambda t: _nest(*t))


def _nest(depth: int, kind: str) -> Any:
    if depth > 90:  # deeper than json.dumps likes: written raw
        return nested_raw(depth, "[" if kind == "list" else "{")
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


@cache
def odd_scalars() -> st.SearchStrategy[Any]:
    return uniform(
        st.sampled_from(EDGE_INTS), st.sampled_from(EDGE_FLOATS), st.sampled_from(EDGE_TIMES),
        st.sampled_from(EDGE_STRINGS), st.sampled_from(RAW_TOKENS), long_strings(),
        odd_text(), st.integers(), st.floats(), st.booleans(), st.none(),
    )


RAW_STRINGS = [raw for raw in RAW_TOKENS if raw.text.startswith(b'"')]
RAW_NUMBERS = [raw for raw in RAW_TOKENS if not raw.text.startswith(b'"')]


@cache
def _numeric_strings() -> st.SearchStrategy[str]:
    return weighted((3, st.sampled_from([str(i) for i in EDGE_INTS])), (1, odd_strings()))


@cache
def _times() -> st.SearchStrategy[str]:
    return weighted((3, st.sampled_from(EDGE_TIMES)), (1, odd_strings()))


@cache
def odd_strings() -> st.SearchStrategy[Any]:
    """Strings that are still strings, and still look like what they replace."""
    return uniform(st.sampled_from(EDGE_STRINGS), st.sampled_from(EDGE_TIMES),
                   st.sampled_from(RAW_STRINGS), long_strings(), odd_text(),
                   odd_text().map(lambda t: "GET" + t))


def same_kind(value: Any) -> st.SearchStrategy[Any]:
    """An odd value of the kind `value` is: type checks pass, the value rules are tried."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return _numbers(tuple(EDGE_INTS))
    if isinstance(value, float):
        return _numbers(tuple(EDGE_FLOATS))
    if isinstance(value, str) and value.isdigit():  # OTLP/JSON's 64-bit integers
        return _numeric_strings()
    if isinstance(value, str) and value[:2] == "20" and "T" in value:  # a timestamp
        return _times()
    if isinstance(value, str):
        return odd_strings()
    if isinstance(value, list):
        return _odd_lists(bool(value) and isinstance(value[0], str))
    if isinstance(value, dict):
        return _odd_objects()
    return odd_values()


@cache
def _numbers(edges: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return uniform(st.sampled_from(edges), st.sampled_from(RAW_NUMBERS))


@cache
def _odd_lists(of_strings: bool) -> st.SearchStrategy[Any]:
    return st.lists(odd_strings() if of_strings else odd_values(), max_size=4)


@cache
def _odd_objects() -> st.SearchStrategy[Any]:
    return uniform(st.dictionaries(odd_text(), odd_values(), max_size=4),
                   nested_values(VALUE_MAX_DEPTH).map(lambda v: {"deep": v}))


@cache
def odd_values() -> st.SearchStrategy[Any]:
    """Any value a hostile client might put where another was expected."""
    return weighted(
        (6, odd_scalars()),
        (1, st.lists(odd_scalars(), max_size=3)),
        (1, st.dictionaries(odd_text(), odd_scalars(), max_size=3)),
        (1, nested_values(VALUE_MAX_DEPTH)), (1, nested_values(BODY_MAX_DEPTH)),
        (1, st.sampled_from([[], {}])),
    )
