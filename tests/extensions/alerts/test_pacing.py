"""The sender's arithmetic: backoff with jitter, giving up, and folding what is
beyond a destination's rate into one digest."""

from __future__ import annotations

import random
from dataclasses import dataclass

from extensions.alerts.pacing import given_up, plan, retry_delay


@dataclass(frozen=True)
class Delivery:
    id: int
    fact_id: int | None


def test_the_delay_grows_to_its_cap_with_full_jitter() -> None:
    rng = random.Random(7)
    for attempts, ceiling in ((1, 1.0), (2, 2.0), (3, 4.0), (9, 256.0), (10, 300.0),
                              (500, 300.0)):
        delays = [retry_delay(attempts, 1.0, 300.0, None, rng) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling / 2  # drawn over the whole range, not a constant
        assert min(delays) < ceiling / 2


def test_retry_after_wins_bounded_by_the_cap() -> None:
    rng = random.Random(1)
    assert retry_delay(1, 1.0, 300.0, 42.0, rng) == 42.0
    assert retry_delay(1, 1.0, 300.0, 86400.0, rng) == 300.0
    assert retry_delay(1, 1.0, 300.0, -5.0, rng) == 0.0


def test_a_delivery_is_given_up_after_give_up_s() -> None:
    assert not given_up(0, 3_599_999_999, 3600)
    assert given_up(0, 3_600_000_000, 3600)


def test_everything_due_is_sent_while_the_rate_allows() -> None:
    due = [Delivery(i, i) for i in range(3)]
    result = plan(due, 10)
    assert (result.send, result.fold, result.wait) == (due, [], [])


def test_beyond_the_rate_the_rest_is_folded_into_the_last_slot() -> None:
    due = [Delivery(i, i) for i in range(1000, 0, -1)]
    result = plan(due, 10)
    assert [d.id for d in result.send] == list(range(1, 10))  # the oldest, alone
    assert [d.id for d in result.fold] == list(range(10, 1001))
    assert result.wait == []


def test_digests_go_first_and_are_never_folded_again() -> None:
    digests = [Delivery(1, None), Delivery(2, None)]
    singles = [Delivery(i, i) for i in range(3, 8)]
    result = plan(singles + digests, 3)
    # Two digests take two slots; of five singles, none goes alone: the last slot
    # carries a digest of all five.
    assert result.send == digests and result.fold == singles and result.wait == []
    none_left = plan(singles + digests, 1)
    assert none_left.send == [digests[0]] and none_left.fold == []
    assert none_left.wait == [digests[1], *singles]


def test_without_a_slot_everything_waits() -> None:
    due = [Delivery(1, 1), Delivery(2, None)]
    result = plan(due, 0)
    assert result.send == [] and result.fold == [] and result.wait == [due[1], due[0]]
