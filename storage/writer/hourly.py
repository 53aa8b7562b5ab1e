"""The hourly request rollups (storage/schema/rollups.py), written from a commit's per-minute
rollups in the same transaction, so that an hour's row always equals the sum of
its minutes' and its coarse histogram the coarsened sum of theirs.

The long ranges of the performance page read these: a week of one route is 168
rows and a few hundred coarse latency buckets instead of 10,080 rows and tens of
thousands of fine ones (storage/queries/performance.py). Atomic upserts in key
order, as for the per-minute rows (storage/writer/groups.py).
"""

from __future__ import annotations

from typing import Any

from model import histogram
from storage import rows
from storage.writer.copy import copy_types
from storage.writer.rollups import upsert_pair

# The hourly tables of each per-minute rollups table: counts and latency, or counts
# holding their buckets (storage/writer/rollups.py).
HOURLY: dict[str, tuple[str, str | None]] = {
    rows.REQUEST_ROLLUPS: (rows.REQUEST_ROLLUPS_HOURLY, rows.REQUEST_LATENCY_HOURLY),
    rows.METRIC_REQUEST_ROLLUPS: (rows.METRIC_REQUEST_ROLLUPS_HOURLY, None),
}
HOURLY_KEY = rows.HOURLY_KEY.column_names
_HOURLY_KEY_TYPES = copy_types(rows.HOURLY_KEY, HOURLY_KEY)
Key = tuple[Any, ...]  # (project_id, service, env, method, route, minute or hour)


def _hour(key: Key) -> Key:
    return (*key[:-1], key[-1] - key[-1] % 3600)


def upsert_hourly(cursor: Any, dialect: str, rollups: dict[Key, list[Any]],
                  buckets: dict[tuple[Key, int], int], minute_table: str) -> None:
    """Add a commit's per-minute counts and fine latency buckets, as written to
    `minute_table`, to its hourly tables."""
    if not rollups:
        return
    hours: dict[Key, list[Any]] = {}
    for key, (c, e, s) in rollups.items():
        agg = hours.setdefault(_hour(key), [0, 0, 0.0])
        agg[0] += c
        agg[1] += e
        agg[2] += s
    coarse: dict[tuple[Key, int], int] = {}
    for (key, bucket), n in buckets.items():
        ckey = (_hour(key), histogram.coarse_of(bucket))
        coarse[ckey] = coarse.get(ckey, 0) + n
    upsert_pair(cursor, dialect, HOURLY[minute_table], HOURLY_KEY, _HOURLY_KEY_TYPES, hours,
                coarse)
