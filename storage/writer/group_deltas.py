"""A batch's group deltas in the wire form (rows.GROUPS, rows.REOPEN), and the one
correction they take: when some of the batch's errors are not stored (the store
cannot hold them: storage/wire/batch.py; a copy already stored: storage/writer/occurrences.py),
the groups of those errors are counted again from the errors kept, by
model/groupcounts.py's rule, so that a group counts exactly the errors stored and
an error not stored reopens nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator

from model.groupcounts import GroupDelta, count_errors
from storage import rows
from storage.rows import Row

_GROUP = rows.GROUPS.getter("fingerprint", "exception_class", "message", "count",
                            "first_seen_us", "last_seen_us", "hourly")
_GROUP_FINGERPRINT = rows.GROUPS.getter("fingerprint")
_REOPEN_FINGERPRINT = rows.REOPEN.getter("fingerprint")


def group_rows(deltas: Iterable[GroupDelta]) -> list[Row]:
    group_row = rows.GROUPS.row
    return [group_row(fingerprint=g.fingerprint, exception_class=g.exception_class,
                      message=g.message, count=g.count, first_seen_us=g.first_seen_us,
                      last_seen_us=g.last_seen_us, hourly=g.hourly) for g in deltas]


def reopen_rows(latest: Iterable[tuple[str, int]]) -> list[Row]:
    reopen_row = rows.REOPEN.row
    return [reopen_row(fingerprint=fingerprint, ts_us=ts_us) for fingerprint, ts_us in latest]


def deltas(groups: Iterable[Row]) -> Iterator[GroupDelta]:
    """The deltas of wire rows (each a new object: adding to it leaves the row alone)."""
    for fingerprint, exception_class, message, count, first, last, hourly in map(
            _GROUP, groups):
        yield GroupDelta(fingerprint, exception_class, message, count, first, last,
                         dict(hourly))


def recount(groups: list[Row], reopen: list[Row], touched: Collection[str],
            kept: Iterable[tuple[str, int, str, str]]) -> tuple[list[Row], list[Row]]:
    """`groups` and `reopen` with those of the fingerprints `touched` (the groups that
    lost errors) counted again from the errors `kept` ((fingerprint, ts_us,
    exception_class, message) of the batch's errors stored); a group none of whose
    errors was kept is left out."""
    again = count_errors(error for error in kept if error[0] in touched)
    out_groups = []
    for row in groups:
        fingerprint = _GROUP_FINGERPRINT(row)
        if fingerprint not in touched:
            out_groups.append(row)
        elif fingerprint in again:
            out_groups.extend(group_rows([again[fingerprint]]))
    out_reopen = []
    for row in reopen:
        fingerprint = _REOPEN_FINGERPRINT(row)
        if fingerprint not in touched:
            out_reopen.append(row)
        elif fingerprint in again:
            out_reopen.extend(reopen_rows([(fingerprint, again[fingerprint].last_seen_us)]))
    return out_groups, out_reopen
