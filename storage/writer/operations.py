"""The operation and edge rollups (storage/schema/rollups.py): each batch's folded
rows (processors/operations.py) added up over the commit, then upserted per minute
and per hour in key order, their latency buckets in the row (storage/writer/
rollups.py's `upsert_in_row`), coarse (quantiles within 5%) per minute as per hour.
A batch arrives already folded, so this costs a few
rows per batch, not a row per span; the buckets stay gathered per key all the way
(keying each bucket by its row's key, as the request rollups do, cost twice as
much here: an operation row holds dozens of buckets)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from storage import rows
from storage.rows import WireBatch
from storage.writer.copy import copy_types
from storage.writer.rollups import upsert_in_row

Key = tuple[Any, ...]
# (per-minute table, its key, hourly table, its key, the wire list)
_TABLES = ((rows.OPERATION_ROLLUPS, rows.OPERATION_KEY, rows.OPERATION_ROLLUPS_HOURLY,
            rows.OPERATION_HOURLY_KEY, "operations"),
           (rows.EDGE_ROLLUPS, rows.EDGE_KEY, rows.EDGE_ROLLUPS_HOURLY,
            rows.EDGE_HOURLY_KEY, "edges"))


def _key(form: rows.RowForm) -> tuple[tuple[str, ...], list[str]]:
    return form.column_names, copy_types(form, form.column_names)


_KEYS = {form.table: _key(form) for t in _TABLES for form in (t[1], t[3])}


def _add_up(batches: Sequence[WireBatch], name: str) -> dict[Key, list[Any]]:
    """[count, errors, duration sum, {bucket: count}] per key, buckets keyed as their
    JSON has them (text): they are only added up and written back."""
    rollups: dict[Key, list[Any]] = {}
    loads = orjson.loads
    for batch in batches:
        project_id = batch.project_id
        for *key_rest, c, e, s, text in getattr(batch, name):
            key = (project_id, *key_rest)
            buckets = loads(text)
            agg = rollups.get(key)
            if agg is None:
                rollups[key] = [c, e, s, buckets]
            else:
                _add(agg, c, e, s, buckets)
    return rollups


def _add(agg: list[Any], count: int, errors: int, duration_ms: float,
         buckets: dict[str, int]) -> None:
    """One rollup's counts added to an aggregate [count, errors, duration sum, buckets]."""
    agg[0] += count
    agg[1] += errors
    agg[2] += duration_ms
    merged = agg[3]
    for b, n in buckets.items():
        merged[b] = merged.get(b, 0) + n


def _hours(rollups: dict[Key, list[Any]]) -> dict[Key, list[Any]]:
    """The per-minute rollups added up per hour (their buckets are coarse already:
    processors/operations.py)."""
    hours: dict[Key, list[Any]] = {}
    for key, (c, e, s, buckets) in rollups.items():
        hkey = (*key[:-1], key[-1] - key[-1] % 3600)
        agg = hours.get(hkey)
        if agg is None:
            agg = hours[hkey] = [0, 0, 0.0, {}]
        _add(agg, c, e, s, buckets)
    return hours


def write_operations(cursor: Any, dialect: str, batches: Sequence[WireBatch]) -> None:
    """Add the batches' operation and edge rollups, per minute and per hour."""
    for minutes_table, minute_key, hours_table, hour_key, name in _TABLES:
        rollups = _add_up(batches, name)
        if not rollups:
            continue
        upsert_in_row(cursor, dialect, minutes_table, *_KEYS[minute_key.table], rollups)
        upsert_in_row(cursor, dialect, hours_table, *_KEYS[hour_key.table], _hours(rollups))
