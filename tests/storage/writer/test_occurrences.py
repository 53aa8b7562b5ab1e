"""One exception sent as a span event and as a log record is stored and counted once
(storage/writer/occurrences.py), on SQLite and PostgreSQL: in one batch, in one
commit, across commits, and across two writers at once; group counts, hourly counts,
first/last seen and reopening follow the copies kept."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa

from model.records import Batch, ErrorEvent, LogRecord, Span
from processors.exceptions import ExceptionsProcessor
from processors.grouping import GroupingProcessor
from processors.logexceptions import LogExceptionsProcessor
from processors.reopen import ReopenProcessor
from storage import keys
from storage.groups import status as groups
from storage.store import Store
from storage.wire.batch import write_batches
from tests.support.postgres import wait_until_blocked

US, NS = 1_000, 1_000_000_000  # ns per µs, ns per s
T0 = 1_795_168_800 * NS  # 2026-11-20T10:00:00Z
HOUR_NS = 3600 * NS
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
STACK = ('Traceback (most recent call last):\n  File "/srv/shop/pay.py", line 9, in pay\n'
         "shop.errors.Declined: card 4 declined\n")
RESOURCE = {"service.name": "shop", "deployment.environment.name": "prod",
            "service.version": "1.2"}
PROCESSORS = [ExceptionsProcessor("exceptions"), LogExceptionsProcessor("logexceptions"),
              GroupingProcessor("grouping"), ReopenProcessor("reopen")]


def exception(message: str = "card 4 declined", module: str = "") -> dict[str, Any]:
    return {"exception.type": f"{module}Declined", "exception.message": message,
            "exception.stacktrace": STACK}


def span(span_id: str, *events: tuple[int, dict[str, Any]]) -> Span:
    """A span with an `exception` event per (time, attributes)."""
    return Span(TRACE, span_id, "", "POST /pay", 2, T0, T0 + 10 * HOUR_NS, 2, "", "shop",
                "s", RESOURCE, attributes={},
                events=[{"name": "exception", "time_unix_nano": t, "attributes": a}
                        for t, a in events])


def log(span_id: str, time_ns: int, attributes: dict[str, Any]) -> LogRecord:
    return LogRecord(time_ns, time_ns, 17, "ERROR", TRACE, span_id, 1, "", "shop", "s",
                     RESOURCE, attributes=attributes)


@dataclass
class Db:
    store: Store
    project: int

    def batch(self, spans: list[Span] | None = None, logs: list[LogRecord] | None = None,
              errors: list[ErrorEvent] | None = None, project: int | None = None) -> Batch:
        batch = Batch(project_id=project or self.project, spans=spans or [], logs=logs or [],
                      errors=errors or [])
        for processor in PROCESSORS:
            batch = processor.process(batch)
        return batch

    def write(self, *batches: Batch, conn: Any = None) -> None:
        """Every batch in one commit, as the writer process commits what waits."""
        if conn is not None:
            write_batches(conn, list(batches), 7)
            return
        with self.store.writer.begin() as conn:
            write_batches(conn, list(batches), 7)

    def rows(self, sql: str) -> list[Any]:
        with self.store.reader.connect() as conn:
            return list(conn.execute(sa.text(sql)))

    def events(self) -> list[Any]:
        return self.rows("SELECT project_id, fingerprint, ts_us, exception_class, message, "
                         "log_time_ns, service, environment, release, occurrence_key "
                         "FROM error_events ORDER BY id")

    def groups(self) -> list[tuple[str, int, int, int]]:
        return [tuple(r) for r in self.rows(
            "SELECT exception_class, count, first_seen_us, last_seen_us FROM error_groups "
            "ORDER BY exception_class")]

    def hourly(self) -> dict[int, int]:
        return {int(hour): int(n) for hour, n in self.rows(
            "SELECT hour, sum(count) FROM error_group_hourly GROUP BY hour")}


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "shop")
    yield Db(store, project)
    store.dispose()


A, B = "00f067aa0ba902b7", "00f067aa0ba902b8"  # two spans of the trace


def test_a_span_event_then_its_log_record_in_two_commits_count_once(db: Db) -> None:
    # The span event names the type with its module, the logging bridge without: two
    # fingerprints, two would-be groups, one occurrence.
    db.write(db.batch(spans=[span(A, (T0 + NS, exception(module="shop.errors.")))]))
    db.write(db.batch(logs=[log(A, T0 + 2 * NS, exception())]))
    (stored,) = db.events()
    assert stored.exception_class == "shop.errors.Declined"  # the first committed is kept
    assert stored.ts_us == (T0 + NS) // US
    assert stored.log_time_ns == T0 + 2 * NS  # ...and leads to the log record
    assert (stored.service, stored.environment, stored.release) == ("shop", "prod", "1.2")
    assert db.groups() == [("shop.errors.Declined", 1, (T0 + NS) // US, (T0 + NS) // US)]
    assert db.hourly() == {T0 // NS: 1}


def test_a_log_record_then_its_span_event_count_once(db: Db) -> None:
    db.write(db.batch(logs=[log(A, T0 + 2 * NS, exception())]))
    db.write(db.batch(spans=[span(A, (T0 + NS, exception(module="shop.errors.")))]))
    (stored,) = db.events()
    assert (stored.exception_class, stored.log_time_ns) == ("Declined", T0 + 2 * NS)
    assert db.groups() == [("Declined", 1, (T0 + 2 * NS) // US, (T0 + 2 * NS) // US)]
    assert db.hourly() == {T0 // NS: 1}


def test_copies_in_one_commit_and_in_one_batch_count_once(db: Db) -> None:
    traces = db.batch(spans=[span(A, (T0 + NS, exception()))])
    logs = db.batch(logs=[log(A, T0 + 2 * NS, exception()), log(A, T0 + 3 * NS, exception())])
    db.write(traces, logs)
    (stored,) = db.events()
    assert (stored.ts_us, stored.log_time_ns) == ((T0 + NS) // US, T0 + 2 * NS)
    assert db.groups() == [("Declined", 1, (T0 + NS) // US, (T0 + NS) // US)]
    db.write(logs)  # a retried logs request: nothing more
    assert len(db.events()) == 1 and db.groups()[0][1] == 1


def test_a_group_counts_its_other_occurrences_exactly(db: Db) -> None:
    # In one logs batch: the copy of an exception already stored, and two others of
    # the same group, in another span and another hour.
    db.write(db.batch(spans=[span(A, (T0 + 5 * NS, exception()))]))
    copy = log(A, T0 + 6 * NS, exception())
    others = [log(B, T0 + 1 * NS, exception()), log(B, T0 + HOUR_NS, exception("card 5 declined"))]
    db.write(db.batch(logs=[copy, *others]))
    assert len(db.events()) == 3
    assert db.groups() == [("Declined", 3, (T0 + NS) // US, (T0 + HOUR_NS) // US)]
    assert db.hourly() == {T0 // NS: 2, T0 // NS + 3600: 1}
    assert db.rows("SELECT message FROM error_groups") == [("card 5 declined",)]
    # The copy dropped was the group's latest error in its batch's delta: first/last
    # seen and the hourly counts are the kept errors', not the copy's.
    db.write(db.batch(logs=[log(A, T0 + 2 * HOUR_NS, exception())]))
    assert db.groups() == [("Declined", 3, (T0 + NS) // US, (T0 + HOUR_NS) // US)]
    assert db.hourly() == {T0 // NS: 2, T0 // NS + 3600: 1}


def test_a_copy_does_not_reopen_a_resolved_group(db: Db) -> None:
    db.write(db.batch(spans=[span(A, (T0 + NS, exception()))]))
    (fingerprint,) = [r[0] for r in db.rows("SELECT fingerprint FROM error_groups")]
    groups.set_status(db.store, db.project, fingerprint, "resolved", at_us=(T0 + 10 * NS) // US)
    # Its log record comes late, after the resolution: not a recurrence.
    db.write(db.batch(logs=[log(A, T0 + 60 * NS, exception())]))
    assert db.rows("SELECT status, reopen_count FROM error_groups") == [("resolved", 0)]
    # A new occurrence (another span) does reopen it.
    db.write(db.batch(logs=[log(B, T0 + 61 * NS, exception())]))
    assert db.rows("SELECT status, reopen_count FROM error_groups") == [("open", 1)]
    assert db.groups()[0][1] == 2


def test_errors_without_a_key_are_never_merged(db: Db) -> None:
    # API errors, even with a trace and span id, and exceptions outside a trace.
    api = ErrorEvent("fp", "E", "m", [], T0 // US, trace_id=TRACE, span_id=A)
    lone = LogRecord(T0, T0, 17, "", "", "", 0, "", "shop", "s", RESOURCE,
                     attributes=exception())
    db.write(db.batch(errors=[api, api], logs=[lone, lone]))
    db.write(db.batch(errors=[api], logs=[lone]))
    assert len(db.events()) == 6
    assert sorted(g[1] for g in db.groups()) == [3, 3]
    assert all(e.occurrence_key is None for e in db.events())


def test_keys_are_per_project(db: Db) -> None:
    with db.store.writer.begin() as conn:
        other = keys.ensure_project(conn, "other")
    db.write(db.batch(spans=[span(A, (T0, exception()))]),
             db.batch(spans=[span(A, (T0, exception()))], project=other))
    assert [e.project_id for e in db.events()] == [db.project, other]


def race_two_writers(pg_url: str) -> Db:
    """Two writers at once on one PostgreSQL database, each with a copy of one
    exception (a span event, then its log record and another): the second writer's
    insert waits for the first's commit, checked by seeing it wait on the first's lock.
    The store as they left it."""
    store = Store(pg_url)
    store.upgrade()
    with store.writer.begin() as conn:
        db = Db(store, keys.ensure_project(conn, "shop"))
    traces = db.batch(spans=[span(A, (T0 + NS, exception()))])
    logs = db.batch(logs=[log(A, T0 + 2 * NS, exception()), log(B, T0 + 3 * NS, exception())])
    first = store.writer.connect()
    transaction = first.begin()
    db.write(traces, conn=first)  # inserted, not committed
    failures: list[BaseException] = []

    def second() -> None:
        try:
            db.write(logs)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    wait_until_blocked(store, thread)  # until the second writer waits on a lock
    assert failures == []
    transaction.commit()
    first.close()
    thread.join()
    assert failures == []
    return db


@pytest.mark.postgres
def test_two_writers_at_once_keep_one_copy(pg_url: str) -> None:
    """The second writer drops its copy of the first's exception."""
    db = race_two_writers(pg_url)
    stored = db.events()
    assert [(e.ts_us, e.log_time_ns) for e in stored] == [
        ((T0 + NS) // US, T0 + 2 * NS), ((T0 + 3 * NS) // US, T0 + 3 * NS)]
    assert db.groups() == [("Declined", 2, (T0 + NS) // US, (T0 + 3 * NS) // US)]
    assert db.hourly() == {T0 // NS: 2}
    db.store.dispose()
