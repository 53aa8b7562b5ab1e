"""The exporters' queue bound (runtime/queuebound.py): records and bytes, and an
empty queue taking one batch however large."""

from __future__ import annotations

from runtime.queuebound import QueueBound


def test_an_empty_queue_takes_one_batch_however_large() -> None:
    bound = QueueBound(max_records=10, max_bytes=100)
    assert bound.takes(1_000, 1_000_000)
    bound.add(1_000, 1_000_000)
    assert bound.full
    assert not bound.takes(1, 1)


def test_a_batch_is_taken_while_both_bounds_hold() -> None:
    bound = QueueBound(max_records=10, max_bytes=100)
    bound.add(4, 40)
    assert bound.takes(6, 60)  # exactly at both bounds
    assert not bound.takes(7, 10)  # past the records
    assert not bound.takes(1, 61)  # past the bytes
    assert not bound.full


def test_bytes_alone_make_a_queue_not_empty() -> None:
    bound = QueueBound(max_records=10, max_bytes=100)
    bound.add(0, 90)
    assert not bound.takes(1, 20)


def test_full_at_either_bound_and_over_half() -> None:
    bound = QueueBound(max_records=10, max_bytes=100)
    bound.add(5, 50)
    assert not bound.full and not bound.over_half
    bound.add(1, 0)
    assert bound.over_half and not bound.full
    bound.add(0, 50)
    assert bound.full


def test_removing_never_goes_below_empty() -> None:
    bound = QueueBound(max_records=10, max_bytes=100)
    bound.add(3, 30)
    bound.remove(5, 50)  # what a previous run left, counted out twice
    assert (bound.records, bound.bytes) == (0, 0)
    assert bound.takes(1_000, 1_000)


def test_a_queue_of_bytes_alone() -> None:
    """The decode workers' and a receiver's body budgets bound bytes, not records."""
    bound = QueueBound(None, max_bytes=100)
    assert bound.takes(10**9, 1_000)  # empty: one body however large
    bound.add(0, 60)
    assert bound.takes(10**9, 40) and not bound.takes(0, 41)
    assert not bound.full and bound.over_half
    bound.add(0, 40)
    assert bound.full
