"""The sender's arithmetic, pure: when to try a delivery again, and which of the
deliveries due to one destination go out alone and which are folded into a digest
so that no destination gets more than its rate.

The rate is a sliding minute: a destination that got `rate` messages in the last
60 seconds (from any collector: the store counts them) gets nothing more until
one of them is a minute old. When deliveries are due and fewer slots are left
than deliveries, all but the last slot go out one by one, oldest first, and the
last slot carries one digest naming all the others. A thousand new groups in one
second are thus `rate` messages in that minute, not a thousand.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from runtime import retry


class DeliveryLike(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def fact_id(self) -> int | None: ...  # None: a digest


D = TypeVar("D", bound=DeliveryLike)


def retry_delay(attempts: int, first_s: float, max_s: float, after_s: float | None,
                rng: random.Random) -> float:
    """Seconds before the next attempt, after `attempts` failed ones (1 or more).
    The receiver's Retry-After wins (bounded by max_s, so a typo there cannot park an
    alert for a day); else full jitter (runtime/retry.py): uniform in
    [0, min(max_s, first_s * 2**(attempts-1))], so collectors that failed together do
    not retry together."""
    return retry.retry_delay(
        after_s, lambda: retry.full_jitter(attempts - 1, first_s, max_s, rng), max_s)


def given_up(created_us: int, now_us: int, give_up_s: float) -> bool:
    """A delivery still unsent this long after it was created is marked failed."""
    return now_us - created_us >= give_up_s * 1_000_000


@dataclass(frozen=True)
class Plan(Generic[D]):
    send: list[D]  # sent one by one, digests among them
    fold: list[D]  # folded into one new digest, sent in the last slot
    wait: list[D]  # no slot this minute: left for a later turn


def plan(due: Sequence[D], slots: int) -> Plan[D]:
    """What to do with the deliveries due to one destination, given the messages it
    may still get this minute. Digests already made go first (they hold the
    oldest alerts); a digest is never folded into another."""
    digests = sorted((d for d in due if d.fact_id is None), key=lambda d: d.id)
    singles = sorted((d for d in due if d.fact_id is not None), key=lambda d: d.id)
    slots = max(slots, 0)
    send = digests[:slots]
    wait = digests[slots:]
    left = slots - len(send)
    if left <= 0:
        return Plan(send, [], wait + singles)
    if len(singles) <= left:
        return Plan(send + singles, [], wait)
    # One slot for the digest of the rest; a digest of one alert is that alert.
    alone = singles[:left - 1]
    rest = singles[left - 1:]
    return Plan(send + alone, rest, wait)
