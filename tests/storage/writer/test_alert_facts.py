"""The writer records alert facts in its commit (storage/writer/alert_facts.py), on SQLite
and PostgreSQL: one `new_group` per new fingerprint, one `regression` per reopening,
none for a late event dated before the resolution, one of two writers racing on a
new group, and none when the commit rolls back."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa

from model.records import Batch, ErrorEvent
from processors.grouping import GroupingProcessor
from processors.reopen import ReopenProcessor
from storage import keys
from storage.alerts import outbox
from storage.groups import status
from storage.store import Store
from storage.wire.batch import write_batches
from storage.writer.alert_facts import dedupe_key
from tests.support.postgres import wait_until_blocked

T0 = 1_795_168_800_000_000  # µs, 2026-11-20T10:00:00Z
SECOND = 1_000_000
RECEIVED = T0 + 3600 * SECOND
PROCESSORS = [GroupingProcessor("grouping"), ReopenProcessor("reopen")]


def error(ts_us: int, fingerprint: str = "fp-a", message: str = "card declined",
          service: str | None = "shop") -> ErrorEvent:
    return ErrorEvent(fingerprint, "Declined", message, ["pay.py:9"], ts_us, service=service,
                      environment="prod", release="1.2")


@dataclass
class Db:
    store: Store
    project: int

    def batch(self, *errors: ErrorEvent) -> Batch:
        batch = Batch(project_id=self.project, errors=list(errors))
        for processor in PROCESSORS:
            batch = processor.process(batch)
        return batch

    def write(self, *batches: Batch, conn: Any = None) -> None:
        """Every batch in one commit, as the writer process commits what waits."""
        if conn is not None:
            write_batches(conn, list(batches), RECEIVED)
            return
        with self.store.writer.begin() as conn:
            write_batches(conn, list(batches), RECEIVED)

    def facts(self) -> list[Any]:
        with self.store.reader.connect() as conn:
            return list(conn.execute(sa.text(
                "SELECT project_id, kind, subject, dedupe_key, at_us, details, created_us, "
                "routed_us FROM alert_facts ORDER BY id")))

    def resolve(self, fingerprint: str, at_us: int) -> None:
        status.set_status(self.store, self.project, fingerprint, "resolved", at_us=at_us)


def alerts_ids(db: Db) -> list[int]:
    with db.store.reader.connect() as conn:
        return list(conn.execute(sa.text("SELECT id FROM alert_facts")).scalars())


def details(fact: Any) -> dict[str, Any]:
    return fact.details if isinstance(fact.details, dict) else json.loads(fact.details)


def make_db(url: str) -> Db:
    store = Store(url)
    store.upgrade()
    with store.writer.begin() as conn:
        return Db(store, keys.ensure_project(conn, "shop"))


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    made = make_db(db_url)
    yield made
    made.store.dispose()


def test_a_new_fingerprint_makes_exactly_one_new_group_fact(db: Db) -> None:
    db.write(db.batch(error(T0 + 2 * SECOND, message="second"), error(T0 + SECOND)))
    (fact,) = db.facts()
    assert (fact.project_id, fact.kind, fact.subject, fact.dedupe_key) == (
        db.project, "new_group", "fp-a", "new_group:fp-a")
    assert (fact.at_us, fact.created_us, fact.routed_us) == (T0 + SECOND, RECEIVED, None)
    # From the first stored error of the group in the commit; counts from the delta.
    assert details(fact) == {
        "exception_class": "Declined", "message": "second", "environment": "prod",
        "service": "shop", "release": "1.2", "count": 2, "first_seen_us": T0 + SECOND,
        "last_seen_us": T0 + 2 * SECOND}
    (read,) = outbox.facts(db.store, alerts_ids(db))  # as the router reads it
    assert (read.kind, read.details) == ("new_group", details(fact))


def test_more_events_of_the_group_make_no_fact(db: Db) -> None:
    db.write(db.batch(error(T0)))
    db.write(db.batch(error(T0 + SECOND)), db.batch(error(T0 + 2 * SECOND)))
    db.write(db.batch(error(T0 + 3 * SECOND)))
    assert [f.kind for f in db.facts()] == ["new_group"]


def test_each_new_group_of_one_commit_has_its_fact(db: Db) -> None:
    db.write(db.batch(error(T0)))
    db.write(db.batch(error(T0, "fp-a"), error(T0, "fp-b")), db.batch(error(T0, "fp-c")))
    assert [(f.kind, f.subject) for f in db.facts()] == [
        ("new_group", "fp-a"), ("new_group", "fp-b"), ("new_group", "fp-c")]


def test_resolve_then_a_later_event_makes_one_regression_fact(db: Db) -> None:
    db.write(db.batch(error(T0), error(T0 + SECOND)))
    db.resolve("fp-a", T0 + 10 * SECOND)
    db.write(db.batch(error(T0 + 20 * SECOND, message="again", service="api")))
    db.write(db.batch(error(T0 + 30 * SECOND)))  # open now: no second regression
    new_group, regression = db.facts()
    assert (regression.kind, regression.subject, regression.dedupe_key, regression.at_us) == (
        "regression", "fp-a", "regression:fp-a:1", T0 + 20 * SECOND)
    assert details(regression) == {
        "exception_class": "Declined", "message": "again", "environment": "prod",
        "service": "api", "release": "1.2", "count": 3, "first_seen_us": T0,
        "last_seen_us": T0 + 20 * SECOND, "reopen_count": 1}
    # Resolved and reopened again: a second regression, with its own key.
    db.resolve("fp-a", T0 + 40 * SECOND)
    db.write(db.batch(error(T0 + 50 * SECOND)))
    assert [f.dedupe_key for f in db.facts()] == [
        "new_group:fp-a", "regression:fp-a:1", "regression:fp-a:2"]


def test_a_late_event_dated_before_the_resolution_makes_no_fact(db: Db) -> None:
    db.write(db.batch(error(T0)))
    db.resolve("fp-a", T0 + 10 * SECOND)
    db.write(db.batch(error(T0 + 5 * SECOND)))
    assert [f.kind for f in db.facts()] == ["new_group"]
    with db.store.reader.connect() as conn:
        assert conn.execute(sa.text("SELECT status FROM error_groups")).scalar() == "resolved"


def test_an_ignored_group_is_not_reopened_and_makes_no_fact(db: Db) -> None:
    db.write(db.batch(error(T0)))
    status.set_status(db.store, db.project, "fp-a", "ignored", at_us=T0 + SECOND)
    db.write(db.batch(error(T0 + 20 * SECOND)))
    assert [f.kind for f in db.facts()] == ["new_group"]


def test_a_rolled_back_commit_leaves_neither_group_nor_fact(db: Db) -> None:
    with db.store.writer.connect() as conn:
        transaction = conn.begin()
        db.write(db.batch(error(T0)), conn=conn)
        assert conn.execute(sa.text("SELECT count(*) FROM alert_facts")).scalar() == 1
        transaction.rollback()
    with db.store.reader.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM error_groups")).scalar() == 0
    assert db.facts() == []
    db.write(db.batch(error(T0)))  # written again, it is new
    assert [f.kind for f in db.facts()] == ["new_group"]


def test_many_new_groups_in_one_commit_each_get_a_fact(db: Db) -> None:
    # More groups than one upsert statement holds (storage/writer/groups.py, UPSERT_CHUNK).
    db.write(db.batch(*(error(T0, f"fp-{i:04}") for i in range(1_200))))
    db.write(db.batch(*(error(T0, f"fp-{i:04}") for i in range(1_300))))
    made = db.facts()
    assert len(made) == 1_300 and {f.subject for f in made} == {f"fp-{i:04}" for i in range(1_300)}


def test_a_long_fingerprint_makes_a_key_that_fits() -> None:
    long = "f" * 255
    key = dedupe_key(f"regression:{long}:1")
    assert len(key) == 200 and key == dedupe_key(f"regression:{long}:1")
    assert key != dedupe_key(f"regression:{long}:2")
    assert dedupe_key("new_group:short") == "new_group:short"


def test_a_new_group_with_a_long_fingerprint_is_recorded(db: Db) -> None:
    db.write(db.batch(error(T0, "f" * 255)))
    (fact,) = db.facts()
    assert fact.subject == "f" * 255 and len(fact.dedupe_key) == 200


def race(db: Db, end_first: Callable[[Any], None]) -> None:
    """Two writers at once with one new group: the first inserts it and does not
    commit; the second's upsert waits for it (seen waiting on the first's lock) until
    `end_first(transaction)` commits or rolls the first back."""
    first = db.store.writer.connect()
    transaction = first.begin()
    db.write(db.batch(error(T0)), conn=first)  # inserted, not committed
    failures: list[BaseException] = []

    def second() -> None:
        try:
            db.write(db.batch(error(T0 + SECOND)))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    thread = threading.Thread(target=second)
    thread.start()
    wait_until_blocked(db.store, thread)
    assert failures == []
    end_first(transaction)
    first.close()
    # Bounded: a second writer still waiting once the first has ended is a failure
    # that shows who holds what, never a suite that hangs.
    thread.join(120)
    assert not thread.is_alive(), locks(db)
    assert failures == []


def locks(db: Db) -> list[Any]:
    with db.store.reader.connect() as conn:
        return list(conn.execute(sa.text(
            "SELECT a.pid, a.state, a.wait_event_type, a.wait_event, l.locktype, l.mode, "
            "l.granted, l.transactionid, a.query FROM pg_stat_activity a "
            "LEFT JOIN pg_locks l ON l.pid = a.pid WHERE a.datname = current_database() "
            "AND a.pid <> pg_backend_pid()")))


@pytest.mark.postgres
def test_two_writers_at_once_with_the_same_new_group_make_one_fact(pg_url: str) -> None:
    """The second writer's upsert updates the group the first inserted: only the
    first recorded the fact."""
    db = make_db(pg_url)
    race(db, lambda transaction: transaction.commit())
    assert [(f.kind, f.subject, f.at_us) for f in db.facts()] == [("new_group", "fp-a", T0)]
    with db.store.reader.connect() as conn:
        assert conn.execute(sa.text("SELECT count FROM error_groups")).scalar() == 2
    db.store.dispose()


@pytest.mark.postgres
def test_a_new_group_whose_first_writer_rolled_back_is_the_second_writers(pg_url: str) -> None:
    db = make_db(pg_url)
    race(db, lambda transaction: transaction.rollback())
    assert [(f.kind, f.subject, f.at_us) for f in db.facts()] == [
        ("new_group", "fp-a", T0 + SECOND)]
    db.store.dispose()
