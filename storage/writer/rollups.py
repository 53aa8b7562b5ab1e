"""Adding counts to the rollup tables, in key order, so that two writers lock rows in
one order. The per-minute tables (storage/writer/groups.py) and the hourly ones
(storage/writer/hourly.py) differ only in their key and their buckets.

Two layouts of the latency histogram (storage/schema/rollups.py):

- a pair of tables, the counts row and a row per latency bucket (the rollups of
  requests and spans): one atomic `count = count + n` upsert per table;
- the buckets in the counts row itself, as a JSON object of counts by bucket (the
  rollups fed by duration metrics, whose every point carries a dozen buckets or
  more): one upsert per row, adding the stored counts and the new ones bucket by
  bucket in SQL (`merged_buckets_sql`). It is as atomic as `count = count + n`: the
  upsert's update reads the row it locked, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from storage.writer.copy import upsert_rows

Key = tuple[Any, ...]


def merged_buckets_sql(dialect: str, table: str) -> str:
    """The bucket counts of `table`'s row plus those of the row upserted into it
    (`excluded`), added bucket by bucket: a JSON object of counts by bucket."""
    if dialect == "postgresql":
        return (f"(SELECT COALESCE(jsonb_object_agg(key, n), '{{}}')::text FROM "
                f"(SELECT key, sum(value::bigint) AS n FROM (SELECT * FROM "
                f'json_each_text("{table}".buckets::json) UNION ALL SELECT * FROM '
                f"json_each_text(excluded.buckets::json)) AS b GROUP BY key) AS s)")
    return (f"(SELECT json_group_object(key, n) FROM (SELECT key, sum(value) AS n FROM "
            f'(SELECT key, value FROM json_each("{table}".buckets) UNION ALL '
            f"SELECT key, value FROM json_each(excluded.buckets)) GROUP BY key))")


def buckets_json(counts: dict[int, int]) -> str:
    """Counts by bucket as the rollup row's `buckets` holds them."""
    return orjson.dumps(counts, option=orjson.OPT_NON_STR_KEYS).decode()


def upsert_pair(cursor: Any, dialect: str, tables: tuple[str, str | None], key: Sequence[str],
                key_types: Sequence[str], rollups: dict[Key, list[Any]],
                buckets: dict[tuple[Key, int], int]) -> None:
    """Add `rollups` ([count, error count, duration sum in ms] per key) to `tables[0]`
    and `buckets` (count per key and bucket) to `tables[1]`, or, when that is None, to
    the `buckets` of `tables[0]`'s rows."""
    counts, latency = tables
    names = ", ".join(key)
    update = (f"ON CONFLICT ({names}) DO UPDATE SET "
              f'count = "{counts}".count + excluded.count, '
              f'error_count = "{counts}".error_count + excluded.error_count, '
              f'duration_sum_ms = "{counts}".duration_sum_ms + excluded.duration_sum_ms')
    if latency is None:
        by_key: dict[Key, dict[int, int]] = {k: {} for k in rollups}
        for (k, bucket), n in buckets.items():
            by_key[k][bucket] = n
        upsert_rows(cursor, dialect, counts,
                    (*key, "count", "error_count", "duration_sum_ms", "buckets"),
                    (*key_types, "int8", "int8", "float8", "text"),
                    f"{update}, buckets = {merged_buckets_sql(dialect, counts)}",
                    [(*k, c, e, s, buckets_json(by_key[k]))
                     for k, (c, e, s) in sorted(rollups.items())])
        return
    upsert_rows(cursor, dialect, counts, (*key, "count", "error_count", "duration_sum_ms"),
                (*key_types, "int8", "int8", "float8"), update,
                [(*k, c, e, s) for k, (c, e, s) in sorted(rollups.items())])
    upsert_rows(cursor, dialect, latency, (*key, "bucket", "count"),
                (*key_types, "int4", "int8"),
                f"ON CONFLICT ({names}, bucket) DO UPDATE SET "
                f'count = "{latency}".count + excluded.count',
                [(*k, bucket, n) for (k, bucket), n in sorted(buckets.items())])
