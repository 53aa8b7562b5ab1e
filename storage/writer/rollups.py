"""Adding counts to a pair of rollup tables (the counts row and its latency buckets):
one atomic `count = count + n` upsert per table, in key order, so that two writers
lock rows in one order. The per-minute pairs (storage/writer/groups.py) and the
hourly ones (storage/writer/hourly.py) differ only in their key and their buckets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage.writer.copy import upsert_rows

Key = tuple[Any, ...]


def upsert_pair(cursor: Any, dialect: str, tables: tuple[str, str], key: Sequence[str],
                key_types: Sequence[str], rollups: dict[Key, list[Any]],
                buckets: dict[tuple[Key, int], int]) -> None:
    """Add `rollups` ([count, error count, duration sum in ms] per key) to `tables[0]`
    and `buckets` (count per key and bucket) to `tables[1]`."""
    counts, latency = tables
    names = ", ".join(key)
    upsert_rows(cursor, dialect, counts, (*key, "count", "error_count", "duration_sum_ms"),
                (*key_types, "int8", "int8", "float8"),
                f"ON CONFLICT ({names}) DO UPDATE SET "
                f'count = "{counts}".count + excluded.count, '
                f'error_count = "{counts}".error_count + excluded.error_count, '
                f'duration_sum_ms = "{counts}".duration_sum_ms + excluded.duration_sum_ms',
                [(*k, c, e, s) for k, (c, e, s) in sorted(rollups.items())])
    upsert_rows(cursor, dialect, latency, (*key, "bucket", "count"),
                (*key_types, "int4", "int8"),
                f"ON CONFLICT ({names}, bucket) DO UPDATE SET "
                f'count = "{latency}".count + excluded.count',
                [(*k, bucket, n) for (k, bucket), n in sorted(buckets.items())])
