"""What errors add to their groups: the one rule that counts them.

An error group's count, hourly counts, first and last seen, and the class and
message it shows (its latest error's: the last of equal times) are folded here and
nowhere else. The grouping processor folds a batch's errors (processors/grouping.py);
the wire form folds again only the groups of a batch that lost an error the store
cannot hold (storage/wire/batch.py), the writer only those that lost a copy it did not keep
(storage/writer/occurrences.py), so that a group counts exactly the errors stored;
and the writer adds the deltas of a commit's batches together with `GroupDelta.add`
(storage/writer/groups.py). The reopening processor's time of a group is its delta's
`last_seen_us` (processors/reopen.py).

Standard library only: the writer process imports it without the record types.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

HOUR_US = 3_600_000_000


def hour_of(ts_us: int) -> int:
    """The start of the hour of `ts_us`, in epoch seconds: the key of hourly counts."""
    return ts_us // HOUR_US * 3600


@dataclass(slots=True)
class GroupDelta:
    """What some errors add to one error group."""

    fingerprint: str
    exception_class: str
    message: str
    count: int
    first_seen_us: int
    last_seen_us: int
    hourly: dict[int, int]  # hour start (epoch seconds) -> occurrences

    @classmethod
    def of_error(cls, fingerprint: str, ts_us: int, exception_class: str,
                 message: str) -> GroupDelta:
        return cls(fingerprint, exception_class, message, 1, ts_us, ts_us,
                   {hour_of(ts_us): 1})

    def count_error(self, ts_us: int, exception_class: str, message: str) -> None:
        self.count += 1
        self.first_seen_us = min(self.first_seen_us, ts_us)
        if ts_us >= self.last_seen_us:
            # The group shows its latest occurrence's class and message.
            self.last_seen_us = ts_us
            self.exception_class, self.message = exception_class, message
        hour = hour_of(ts_us)
        self.hourly[hour] = self.hourly.get(hour, 0) + 1

    def add(self, other: GroupDelta) -> None:
        """Fold in another delta of the same group (a later one wins a tie)."""
        if other.last_seen_us >= self.last_seen_us:
            self.exception_class, self.message = other.exception_class, other.message
            self.last_seen_us = other.last_seen_us
        self.count += other.count
        self.first_seen_us = min(self.first_seen_us, other.first_seen_us)
        for hour, n in other.hourly.items():
            self.hourly[hour] = self.hourly.get(hour, 0) + n


def count_errors(errors: Iterable[tuple[str, int, str, str]],
                 into: dict[str, GroupDelta] | None = None) -> dict[str, GroupDelta]:
    """The deltas of errors given as (fingerprint, ts_us, exception_class, message),
    folded into `into` (a new dict when None), one per fingerprint."""
    groups: dict[str, GroupDelta] = {} if into is None else into
    for fingerprint, ts_us, exception_class, message in errors:
        delta = groups.get(fingerprint)
        if delta is None:
            groups[fingerprint] = GroupDelta.of_error(fingerprint, ts_us, exception_class,
                                                      message)
        else:
            delta.count_error(ts_us, exception_class, message)
    return groups
