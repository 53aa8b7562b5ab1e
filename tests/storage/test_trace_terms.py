"""The trace search's query text: what it reads, and what it refuses with a reason."""

from __future__ import annotations

import pytest

from storage.queries.trace_terms import AttrEquals, AttrExists, Duration, attr_text, parse


def test_terms_are_read() -> None:
    assert parse(None) == [] and parse("  ") == []
    assert parse('http.route=/a db.system exists duration>250ms route="/x y" empty=') == [
        AttrEquals("http.route", "/a"), AttrExists("db.system"), Duration(">", 250_000_000),
        AttrEquals("route", "/x y"), AttrEquals("empty", "")]
    assert parse("duration>=1.5s duration<20 duration<=3us") == [
        Duration(">=", 1_500_000_000), Duration("<", 20_000_000), Duration("<=", 3_000)]
    assert parse("a=b=c") == [AttrEquals("a", "b=c")]


@pytest.mark.parametrize(("text", "names"), [
    ("lonely", "'lonely'"), ("duration>fast", "duration>fast"), ("size>3", "only duration"),
    ('route="open', "cannot read the query"), ("=x", "not an attribute key"),
    ("duration>99999999h", "too long"), (" ".join(["a=b"] * 21), "at most 20"),
])
def test_bad_terms_are_named(text: str, names: str) -> None:
    with pytest.raises(ValueError, match=names):
        parse(text)


def test_values_compare_as_text() -> None:
    assert [attr_text(v) for v in (True, False, 2, 1.5, "x")] == ["true", "false", "2", "1.5",
                                                                 "x"]
