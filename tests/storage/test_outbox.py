"""The outbox queries (storage/outbox.py) on SQLite and PostgreSQL: many bodies in
one transaction, taken per signal in id order, rescheduled, deleted, counted."""

from __future__ import annotations

from storage import outbox
from storage.outbox import Entry
from storage.store import Store


def entry(signal: str, n: int, body: bytes = b"x") -> Entry:
    return Entry(signal, body * n, "application/json", "", n)


def test_enqueue_take_in_id_order_per_signal(store: Store) -> None:
    assert outbox.enqueue(store, "q", [entry("traces", 1), entry("errors", 2),
                                       entry("traces", 3)], now_us=1_000) == 3
    traces = outbox.take(store, "q", "traces", limit=10)
    assert [r.records for r in traces] == [1, 3]
    assert traces[0].id < traces[1].id
    assert traces[0].body == b"x" and traces[0].attempts == 0
    assert traces[0].next_attempt_us == 1_000
    assert [r.records for r in outbox.take(store, "q", "errors", limit=10)] == [2]
    # limit and after_id page through the rows
    assert [r.id for r in outbox.take(store, "q", "traces", limit=1)] == [traces[0].id]
    assert [r.id for r in outbox.take(store, "q", "traces", 10, after_id=traces[0].id)] == [
        traces[1].id]


def test_queues_are_kept_apart(store: Store) -> None:
    outbox.enqueue(store, "a", [entry("traces", 1)], 0)
    outbox.enqueue(store, "b", [entry("traces", 2)], 0)
    assert [r.records for r in outbox.take(store, "b", "traces", 10)] == [2]
    assert set(outbox.backlog(store, "a")) == {"traces"}
    assert outbox.backlog(store, "a")["traces"].records == 1


def test_reschedule_delete_and_backlog(store: Store) -> None:
    outbox.enqueue(store, "q", [entry("traces", 2, b"ab"), entry("deploys", 1),
                                entry("traces", 5)], 0)
    backlog = outbox.backlog(store, "q")
    assert (backlog["traces"].rows, backlog["traces"].records, backlog["traces"].bytes) == (
        2, 7, 4 + 5)
    first = outbox.take(store, "q", "traces", 1)[0]
    outbox.reschedule(store, first.id, 99_000)
    outbox.reschedule(store, first.id, 123_000)
    again = outbox.take(store, "q", "traces", 1)[0]
    assert (again.id, again.attempts, again.next_attempt_us) == (first.id, 2, 123_000)
    outbox.commit(store, "q", [], [first.id], 0)
    assert [r.records for r in outbox.take(store, "q", "traces", 10)] == [5]
    assert outbox.backlog(store, "q")["traces"].records == 5
    assert outbox.commit(store, "q", [], [], 0) == 0  # nothing to do


def test_one_commit_inserts_and_deletes(store: Store) -> None:
    outbox.enqueue(store, "q", [entry("errors", 1), entry("errors", 2)], 0)
    first, second = outbox.take(store, "q", "errors", 10)
    assert outbox.commit(store, "q", [entry("errors", 3)], [first.id, second.id], 5) == 1
    (row,) = outbox.take(store, "q", "errors", 10)
    assert (row.records, row.next_attempt_us) == (3, 5)


def test_ids_keep_growing_after_deletes(store: Store) -> None:
    """A row enqueued after the queue emptied comes after every earlier one: the
    sender pages by id."""
    outbox.enqueue(store, "q", [entry("traces", 1)], 0)
    (row,) = outbox.take(store, "q", "traces", 10)
    outbox.commit(store, "q", [], [row.id], 0)
    outbox.enqueue(store, "q", [entry("traces", 1)], 0)
    (later,) = outbox.take(store, "q", "traces", 10)
    assert later.id > row.id
