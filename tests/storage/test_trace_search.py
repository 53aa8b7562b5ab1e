"""The trace search's pages and totals, attribute terms and the names it suggests,
on SQLite and on PostgreSQL, over spans written by the real writer."""

from __future__ import annotations

from typing import Any

import pytest

from storage.queries import trace_search as ts
from storage.queries.trace_terms import parse
from storage.store import Store
from tests.storage.test_queries import HOUR, MIN, NOW, NS, Db, db, span  # noqa: F401


@pytest.fixture
def many(db: Db) -> Db:  # noqa: F811
    """12 traces a minute apart (trace i started i minutes ago), 2 spans each; every
    third one slow (300 ms) and on service "slow"; even ones carry tenant=acme."""
    spans = []
    for i in range(12):
        tid = f"{i + 1:032x}"
        slow = i % 3 == 0
        spans.append(span(tid, f"{i + 1:015x}a", "GET /items", NOW - i * MIN - 30,
                          300 if slow else 20, service="slow" if slow else "shop", kind=2,
                          **({"tenant": "acme", "retries": 2} if i % 2 == 0 else {})))
        spans.append(span(tid, f"{i + 1:015x}b", f"query {i}", NOW - i * MIN - 29.99, 5,
                          f"{i + 1:015x}a", **{"db.system": "postgresql", "ok": True}))
    db.ingest(spans=spans)
    return db


def search(at: Db, **kw: Any) -> ts.TracePage:
    return ts.search(at.store, at.project, (NOW - HOUR) * NS, NOW * NS, **kw)


def ids(page: ts.TracePage) -> list[int]:
    return [int(t.trace_id, 16) - 1 for t in page.items]  # back to i, minutes ago


def test_pages_follow_each_other_newest_first_with_the_total(many: Db) -> None:
    first, second, last = (search(many, limit=5, offset=o) for o in (0, 5, 10))
    assert ids(first) == [0, 1, 2, 3, 4] and ids(second) == [5, 6, 7, 8, 9]
    assert ids(last) == [10, 11]
    assert {p.total for p in (first, second, last)} == {12}
    assert not first.capped and first.examined == 24
    assert search(many, offset=12).items == [] and search(many, offset=12).total == 12
    assert search(many, service="slow").total == 4
    summary = first.items[0]
    assert (summary.span_count, summary.root_name, summary.services) == (
        2, "GET /items", ["shop", "slow"])


def test_attribute_terms_and_duration_comparisons(many: Db) -> None:
    assert ids(search(many, terms=parse("tenant=acme"))) == [0, 2, 4, 6, 8, 10]
    assert ids(search(many, terms=parse("retries=2 tenant exists"))) == [0, 2, 4, 6, 8, 10]
    assert ids(search(many, terms=parse("ok=true db.system=postgresql"), limit=3)) == [0, 1, 2]
    assert search(many, terms=parse("ok=true"), limit=3).total == 12
    assert ids(search(many, terms=parse("tenant=other"))) == []
    assert ids(search(many, terms=parse("missing exists"))) == []
    # Every term holds on one span: tenant is on the roots, db.system on the children.
    assert ids(search(many, terms=parse("tenant=acme db.system exists"))) == []
    assert ids(search(many, terms=parse("duration>250ms"))) == [0, 3, 6, 9]
    assert ids(search(many, terms=parse("duration>=300ms"))) == [0, 3, 6, 9]
    assert ids(search(many, terms=parse("duration>300ms"))) == []
    assert ids(search(many, terms=parse("duration<10ms"), limit=2)) == [0, 1]
    assert search(many, terms=parse("duration<=20ms")).total == 12
    assert ids(search(many, terms=parse("duration>0.25s tenant=acme"))) == [0, 6]
    page2 = search(many, terms=parse("tenant exists"), limit=4, offset=4)
    assert ids(page2) == [8, 10] and page2.total == 6


def test_the_attribute_scan_is_bounded(many: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ts, "ATTR_SCAN_CAP", 6)  # the newest 6 bodies holding the key
    page = search(many, terms=parse("db.system exists"))
    assert ids(page) == [0, 1, 2, 3, 4, 5] and page.capped and page.examined == 24
    # Bodies of spans the columns rule out, or without the key's bytes, are not
    # counted against the cap.
    slow = search(many, service="slow", terms=parse("tenant exists"))
    assert ids(slow) == [0, 6] and not slow.capped
    monkeypatch.setattr(ts, "EXAMINE_CAP", 5)  # the newest 5 spans of the range
    plain = search(many)
    assert ids(plain) == [0, 1, 2] and plain.capped and plain.total == 3
    assert plain.examined == 5
    assert search(many, service="slow").total == 1  # only trace 0 among those 5
    assert search(many, terms=parse("db.system exists")).total == 3  # children of 0, 1, 2
    assert search(many, terms=parse("tenant exists")).total == 1  # trace 2's root is older


def test_service_and_span_names_come_from_the_spans(many: Db) -> None:
    services, names = ts.names_in_range(many.store, many.project, (NOW - HOUR) * NS,
                                        NOW * NS)
    assert services == ["shop", "slow"]
    assert names == ["GET /items", *sorted(f"query {i}" for i in range(12))]
    _, of_slow = ts.names_in_range(many.store, many.project, (NOW - HOUR) * NS, NOW * NS,
                                   "slow")
    assert of_slow == ["GET /items"]
    assert ts.names_in_range(many.store, many.project + 1, 0, NOW * NS) == ([], [])


def test_a_search_most_spans_pass_stops_at_enough_traces(
        many: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ts, "TOTAL_WANTED", 3)
    monkeypatch.setattr(ts, "FIRST_WINDOW", 8)  # the newest 8 spans: traces 0 to 3
    first = search(many, limit=2)
    assert ids(first) == [0, 1] and first.total == 4 and first.capped
    assert first.examined == 8
    # Too few matches among those 8: the search reads on, and counts every one.
    slow = search(many, service="slow", limit=2)
    assert ids(slow) == [0, 3] and slow.total == 4 and not slow.capped
    # A page past what the first window could hold reads the whole range at once.
    later = search(many, limit=2, offset=4)
    assert ids(later) == [4, 5] and later.total == 12 and not later.capped
    assert later.examined == 24
    # An attribute scan stops at the first trace past enough: "3+".
    bodies = search(many, terms=parse("ok=true"), limit=2)
    assert ids(bodies) == [0, 1] and bodies.total == 3 and bodies.capped
    assert search(many, terms=parse("ok=true"), limit=2, offset=4).total == 6
    exact = search(many, terms=parse("tenant=acme"), limit=2, offset=4)  # 6 of 6
    assert ids(exact) == [8, 10] and exact.total == 6 and not exact.capped


@pytest.fixture
def failing(db: Db) -> Db:  # noqa: F811
    """40 traces a minute apart, 2 spans each; the child of every tenth one failed."""
    spans = []
    for i in range(40):
        tid = f"{i + 1:032x}"
        spans.append(span(tid, f"{i + 1:015x}a", "GET /items", NOW - i * MIN - 30, 20,
                          status=1))
        spans.append(span(tid, f"{i + 1:015x}b", "query", NOW - i * MIN - 29.99, 5,
                          f"{i + 1:015x}a", status=2 if i % 10 == 0 else 0))
    db.ingest(spans=spans)
    return db


def test_failed_spans_are_found_over_the_whole_range_by_their_own_index(
        failing: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    # The newest 5 spans of the range hold one failure; the failed spans' own walk
    # reads the 4 failed spans alone and counts every one of them.
    monkeypatch.setattr(ts, "EXAMINE_CAP", 5)
    page = search(failing, status="error")
    assert ids(page) == [0, 10, 20, 30] and page.total == 4
    assert not page.capped and page.examined == 4
    # Any other status narrows the walk too: the newest 5 spans of that status.
    ok = search(failing, status="ok")
    assert ids(ok) == [0, 1, 2, 3, 4] and ok.capped and ok.examined == 5
    unset = search(failing, status="unset", limit=1)
    assert ids(unset) == [1] and unset.total == 5 and unset.capped
    assert ids(search(failing, status="error", name="GET")) == []  # its failed span's name


def test_the_failed_spans_walk_uses_their_index_on_sqlite(sqlite_url: str) -> None:
    from sqlalchemy import func, select, text

    store = Store(sqlite_url)
    store.upgrade()
    newest = ts._newest(1, 0, NOW * NS, 10, *ts._filters("error"))
    query = select(func.count()).select_from(ts._window(newest, ts._S.c.start_ns))
    with store.reader.connect() as conn:
        sql = str(query.compile(conn, compile_kwargs={"literal_binds": True}))
        plan = " ".join(str(r[-1]) for r in conn.execute(text("EXPLAIN QUERY PLAN " + sql)))
    store.dispose()
    assert "ix_spans_project_errors" in plan, plan
