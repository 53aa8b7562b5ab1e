"""A project's span names listed by skipping along their index, and the trace search
by name walking the spans of the names that match (storage/queries/span_names.py),
on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from storage.queries import span_names
from storage.queries import trace_search as ts
from tests.storage.test_queries import HOUR, MIN, NOW, NS, Db, db, span  # noqa: F401

NAMES = ["GET /Items", "GET /items/:id", "query 100%", "query_x", "queryAx", "Ünïcode"]


@pytest.fixture
def named(db: Db) -> Db:  # noqa: F811
    """30 traces a minute apart, one span each, named in turn from NAMES; another
    project's spans bear names of their own."""
    db.ingest(spans=[span(f"{i + 1:032x}", f"{i + 1:016x}", NAMES[i % len(NAMES)],
                          NOW - i * MIN - 30, 5) for i in range(30)])
    other = Db(db.store, db.project + 1)
    other.ingest(spans=[span("f" * 32, "f" * 16, "GET /elsewhere", NOW - 30, 5)])
    return db


def holding(at: Db, part: str) -> list[str] | None:
    with at.store.reader.connect() as conn:
        return span_names.names_holding(conn, at.project, part)


def test_names_are_listed_and_matched_as_the_search_matches_them(named: Db) -> None:
    assert sorted(holding(named, "") or []) == sorted(NAMES)
    assert holding(named, "items") == ["GET /Items", "GET /items/:id"]
    assert holding(named, "100%") == ["query 100%"]  # % and _ are no wildcards
    assert holding(named, "y_") == ["query_x"]
    assert holding(named, "elsewhere") == []  # another project's name


def test_a_name_search_counts_every_match_of_the_range(
        named: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ts, "EXAMINE_CAP", 12)  # the newest 12: two of each name

    def search(part: str) -> ts.TracePage:
        return ts.search(named.store, named.project, (NOW - HOUR) * NS, NOW * NS,
                         name=part, limit=3)

    page = search("items")  # 10 spans of the two names: walked by their index alone
    assert [int(t.trace_id, 16) - 1 for t in page.items] == [0, 1, 6]
    assert page.total == 10 and not page.capped and page.examined == 10
    assert search("query_").total == 5 and search("nothing").total == 0
    # Past NAMES_LISTED names, the range is read as before: 12 spans, capped.
    monkeypatch.setattr(span_names, "NAMES_LISTED", 3)
    assert holding(named, "items") is None
    wide = search("items")
    assert wide.total == 4 and wide.capped and wide.examined == 12
