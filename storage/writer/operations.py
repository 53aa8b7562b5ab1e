"""The operation and edge rollups (storage/schema/rollups.py): each batch's folded
rows (processors/operations.py) added up over the commit, then upserted per minute
and per hour in key order, their latency buckets in the row, as the metric-fed
request rollups are (storage/writer/rollups.py). A batch arrives already folded, so
this costs a few rows per batch, not a row per span."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from storage import rows
from storage.rows import WireBatch
from storage.writer.copy import copy_types
from storage.writer.hourly import upsert_hourly
from storage.writer.rollups import upsert_pair

Key = tuple[Any, ...]
_TABLES = ((rows.OPERATION_ROLLUPS, rows.OPERATION_KEY, "operations"),
           (rows.EDGE_ROLLUPS, rows.EDGE_KEY, "edges"))
_KEYS = {table: (form.column_names, copy_types(form, form.column_names))
         for table, form, _ in _TABLES}


def _add_up(batches: Sequence[WireBatch], name: str
            ) -> tuple[dict[Key, list[Any]], dict[tuple[Key, int], int]]:
    """[count, errors, duration sum] per key and the count per (key, bucket)."""
    rollups: dict[Key, list[Any]] = {}
    buckets: dict[tuple[Key, int], int] = {}
    loads = orjson.loads
    for batch in batches:
        project_id = batch.project_id
        for *key_rest, c, e, s, text in getattr(batch, name):
            key = (project_id, *key_rest)
            agg = rollups.get(key)
            if agg is None:
                rollups[key] = [c, e, s]
            else:
                agg[0] += c
                agg[1] += e
                agg[2] += s
            for bucket, n in loads(text).items():
                bkey = (key, int(bucket))
                buckets[bkey] = buckets.get(bkey, 0) + n
    return rollups, buckets


def write_operations(cursor: Any, dialect: str, batches: Sequence[WireBatch]) -> None:
    """Add the batches' operation and edge rollups, per minute and per hour."""
    for table, _form, name in _TABLES:
        rollups, buckets = _add_up(batches, name)
        if not rollups:
            continue
        key, key_types = _KEYS[table]
        upsert_pair(cursor, dialect, (table, None), key, key_types, rollups, buckets)
        upsert_hourly(cursor, dialect, rollups, buckets, table)
