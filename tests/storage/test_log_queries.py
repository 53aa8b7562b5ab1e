"""The Logs page's search (storage/queries/logs.py) against a real store, on SQLite
and PostgreSQL: every filter, totals and pages, the tail's cursor, one record."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from model.records import Batch, LogRecord
from storage import keys
from storage.queries import logs as lq
from storage.store import Store
from storage.wire.batch import write_batches

T0 = 1_795_168_800 * 10**9  # 2026-11-20T10:00:00Z
TRACE = "ab" * 16
SPAN = "cd" * 8


def log(n: int, body: Any, severity: int = 9, service: str = "shop", trace_id: str = "",
        span_id: str = "", **attributes: Any) -> LogRecord:
    """The n-th record: n seconds after T0."""
    return LogRecord(T0 + n * 10**9, T0 + n * 10**9 + 5, severity, "", trace_id, span_id,
                     1 if trace_id else 0, "", service, "tests", {"service.name": service},
                     attributes=attributes, body=body)


@pytest.fixture
def db(db_url: str) -> Iterator[tuple[Store, int]]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "queries")
        other = keys.ensure_project(conn, "elsewhere")
    records = [
        log(1, "user signed in", 9, **{"user.id": 42, "http.route": "/login"}),
        log(2, "cache miss for key 100%_done", 5, "worker", ok=True),
        log(3, "payment refused", 17, trace_id=TRACE, span_id=SPAN, **{"user.id": "42"}),
        log(4, {"msg": "Disk FULL", "free": 0.5}, 13, "worker", ratio=0.25),
        log(5, "plain", 21, "shop", **{'we"ird key': "x=y"}),
        log(6, None, 1, trace_id=TRACE),
    ]
    with store.writer.begin() as conn:
        write_batches(conn, [Batch(project, logs=records),
                             Batch(other, logs=[log(7, "payment refused elsewhere", 17)])], 1)
    yield store, project
    store.dispose()


def bodies(store: Store, project: int, **filters: Any) -> list[Any]:
    page = lq.search(store, project, lq.LogFilter(**filters))
    assert page.total == len(page.items)
    return [item["body"] for item in page.items]


def test_newest_first_in_the_project_only(db: tuple[Store, int]) -> None:
    store, project = db
    page = lq.search(store, project, lq.LogFilter())
    assert page.total == 6
    assert [i["time_ns"] for i in page.items] == [T0 + n * 10**9 for n in (6, 5, 4, 3, 2, 1)]
    assert page.next_after == f"{T0 + 6 * 10**9}.{page.items[0]['id']}"


def test_each_filter(db: tuple[Store, int]) -> None:
    store, project = db
    assert bodies(store, project, service="worker") == [
        {"msg": "Disk FULL", "free": 0.5}, "cache miss for key 100%_done"]
    assert bodies(store, project, min_severity=lq.parse_severity("warn")) == [
        "plain", {"msg": "Disk FULL", "free": 0.5}, "payment refused"]
    # Case-insensitive; in a map body too (its JSON is searched); % and _ are literal.
    assert bodies(store, project, text="disk full") == [{"msg": "Disk FULL", "free": 0.5}]
    assert bodies(store, project, text="100%_") == ["cache miss for key 100%_done"]
    assert bodies(store, project, text="0%") == ["cache miss for key 100%_done"]
    assert bodies(store, project, text="%") == ["cache miss for key 100%_done"]
    assert bodies(store, project, text="_d") == ["cache miss for key 100%_done"]
    assert bodies(store, project, trace_id=TRACE) == [None, "payment refused"]
    assert bodies(store, project, start_ns=T0 + 2 * 10**9, end_ns=T0 + 4 * 10**9) == [
        "payment refused", "cache miss for key 100%_done"]


def test_attribute_key_value_as_text(db: tuple[Store, int]) -> None:
    store, project = db
    # An integer 42 and a string "42" both read as 42.
    assert bodies(store, project, attributes=(("user.id", "42"),)) == [
        "payment refused", "user signed in"]
    assert bodies(store, project, attributes=(("user.id", "42"), ("http.route", "/login"))
                  ) == ["user signed in"]
    assert bodies(store, project, attributes=(("ok", "true"),)) == [
        "cache miss for key 100%_done"]
    assert bodies(store, project, attributes=(("ratio", "0.25"),)) == [
        {"msg": "Disk FULL", "free": 0.5}]
    assert bodies(store, project, attributes=(('we"ird key', "x=y"),)) == ["plain"]
    assert bodies(store, project, attributes=(("user.id", "4"),)) == []
    assert bodies(store, project, attributes=(("user", "42"),)) == []


def test_pages_keep_the_total(db: tuple[Store, int], monkeypatch: pytest.MonkeyPatch
                              ) -> None:
    store, project = db
    first = lq.search(store, project, lq.LogFilter(), limit=4)
    second = lq.search(store, project, lq.LogFilter(), limit=4, offset=4)
    assert (first.total, second.total) == (6, 6)
    assert len(first.items) == 4 and len(second.items) == 2
    assert second.next_after is None  # a later page is no place to tail from
    ids = [i["id"] for i in first.items + second.items]
    assert len(set(ids)) == 6
    assert first.total_exact and second.total_exact
    # Past the cap, counting stops: the total says "at least".
    monkeypatch.setattr(lq, "COUNT_CAP", 5)
    capped = lq.search(store, project, lq.LogFilter(), limit=2)
    assert (capped.total, capped.total_exact, len(capped.items)) == (5, False, 2)
    monkeypatch.setattr(lq, "COUNT_CAP", 6)
    assert lq.search(store, project, lq.LogFilter()).total_exact


def test_after_a_cursor_oldest_first_without_gaps(db: tuple[Store, int]) -> None:
    store, project = db
    newest_first = lq.search(store, project, lq.LogFilter()).items
    cursor = lq.Cursor.parse(lq.cursor_of(newest_first[3]))  # the third record
    page = lq.search(store, project, lq.LogFilter(after=cursor), limit=2)
    assert page.total == 3
    assert [i["time_ns"] for i in page.items] == [T0 + 4 * 10**9, T0 + 5 * 10**9]
    rest = lq.search(store, project, lq.LogFilter(after=lq.Cursor.parse(page.next_after or "")))
    assert [i["time_ns"] for i in rest.items] == [T0 + 6 * 10**9]
    done = lq.search(store, project, lq.LogFilter(after=lq.Cursor.parse(rest.next_after or "")))
    assert done.items == [] and done.next_after == rest.next_after
    # A bare time stands before every record of that time.
    at = lq.search(store, project, lq.LogFilter(after=lq.Cursor(T0 + 6 * 10**9)))
    assert [i["time_ns"] for i in at.items] == [T0 + 6 * 10**9]
    # With other filters, the cursor narrows them.
    errors = lq.search(store, project, lq.LogFilter(after=lq.Cursor(T0), min_severity=17))
    assert [i["body"] for i in errors.items] == ["payment refused", "plain"]


def test_a_record_with_every_field(db: tuple[Store, int]) -> None:
    store, project = db
    (item,) = lq.search(store, project, lq.LogFilter(trace_id=TRACE, min_severity=17)).items
    assert item == {
        "id": item["id"], "time_ns": T0 + 3 * 10**9, "observed_ns": T0 + 3 * 10**9 + 5,
        "severity_number": 17, "severity_text": "", "body": "payment refused",
        "attributes": {"user.id": "42"},
        "resource": {"service.name": "shop"}, "service_name": "shop", "scope_name": "tests",
        "trace_id": TRACE, "span_id": SPAN, "flags": 1, "event_name": "",
        "dropped_attributes_count": 0, "unreadable": []}
    assert len(item["id"]) == 32
    assert lq.get(store, project, item["id"]) == item
    assert lq.get(store, project + 1, item["id"]) is None
    assert lq.get(store, project, "zz") is None
    (mapped,) = lq.search(store, project, lq.LogFilter(service="worker", min_severity=13)).items
    assert mapped["body"] == {"msg": "Disk FULL", "free": 0.5}


def test_services_and_severity_names(db: tuple[Store, int]) -> None:
    store, project = db
    assert lq.services(store, project) == ["shop", "worker"]
    assert [lq.severity_name(n) for n in (0, 1, 9, 12, 13, 24, 25)] == [
        "", "TRACE", "INFO", "INFO4", "WARN", "FATAL4", ""]
    assert [lq.parse_severity(s) for s in ("TRACE", "debug", "Info", "WARNING", "error",
                                           "FATAL", "0", "24")] == [1, 5, 9, 13, 17, 21, 0, 24]
    for bad in ("25", "-1", "loud", "", "1.5"):
        with pytest.raises(ValueError):
            lq.parse_severity(bad)


def test_cursor_text_round_trip_and_refusals() -> None:
    cursor = lq.Cursor(T0, bytes.fromhex("0f" * 16))
    assert lq.Cursor.parse(cursor.text()) == cursor
    assert lq.Cursor.parse("12") == lq.Cursor(12)
    for bad in ("", "x", "-1", "1.zz", "9" * 20, f"{2**63}", "1." + "00" * 17, "1.abc"):
        with pytest.raises(ValueError):
            lq.Cursor.parse(bad)


def test_attribute_values_of_every_kind_at_the_top_level_only(db: tuple[Store, int]) -> None:
    """Attributes are searched in the stored body (storage/logbody.py): each kind of
    value reads as its JSON text, and the same pair inside a map, a list or the body
    is not the record's attribute."""
    store, _ = db
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "kinds")
    records = [
        log(1, "bytes", raw=b"\x00\x01"),
        log(2, "list", tags=[1, "a", True]),
        log(3, "map", ctx={"user.id": 7, "deep": {"k": "v"}}),
        log(4, "nan", x=float("nan"), big=2**70, neg=-3, small=1e-7),
        log(5, {"user.id": 7}, note="user.id=7"),
        log(6, "empty", blank="", unset=None),
    ]
    with store.writer.begin() as conn:
        write_batches(conn, [Batch(project, logs=records)], 1)

    def found(key: str, value: str) -> list[Any]:
        return bodies(store, project, attributes=((key, value),))

    assert found("raw", "AAE=") == ["bytes"]
    assert found("tags", '[1,"a",true]') == ["list"]
    assert found("ctx", '{"user.id":7,"deep":{"k":"v"}}') == ["map"]
    assert found("user.id", "7") == []  # nested in a map value, or the body's own
    assert found("k", "v") == []
    assert found("x", "NaN") == ["nan"]
    assert found("big", str(2**70)) == ["nan"]  # past 64 bits: kept as its text
    assert (found("neg", "-3"), found("small", "1e-07")) == (["nan"], ["nan"])
    assert found("note", "user.id=7") == [{"user.id": 7}]
    assert found("blank", "") == ["empty"]
    assert found("unset", "null") == found("unset", "") == []
    assert found("\ud800", "x") == found("raw", "\ud800") == []  # no UTF-8: nothing
