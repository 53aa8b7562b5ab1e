"""Adding counts to the rollup tables, in key order, so that two writers lock rows in
one order. The per-minute tables (storage/writer/groups.py) and the hourly ones
(storage/writer/hourly.py) differ only in their key and their buckets.

Two layouts of the latency histogram (storage/schema/rollups.py):

- a pair of tables, the counts row and a row per latency bucket (the rollups of
  requests and spans): one atomic `count = count + n` upsert per table;
- the buckets in the counts row itself, as a JSON object of counts by bucket (the
  rollups fed by duration metrics, whose every point carries a dozen buckets or
  more): one upsert per row. On PostgreSQL the upsert adds the stored counts and
  the new ones bucket by bucket in SQL (`merged_buckets_sql`), as atomic as `count =
  count + n`: the update reads the row it locked, so two collectors writing one row
  at once both count. On SQLite the writer holds the file's write lock for the whole
  transaction (BEGIN IMMEDIATE: no other connection writes until it commits), so it
  reads the stored buckets and adds to them in Python, which costs a tenth of
  SQLite's JSON functions doing it (json_each twice, a GROUP BY and
  json_group_object per row: 24 µs a row).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson

from storage.writer.copy import upsert_rows

Key = tuple[Any, ...]


# Stored rows read at once on SQLite: 6 key values each, within SQLite's limit.
READ_CHUNK = 500


def merged_buckets_sql(table: str) -> str:
    """PostgreSQL: the bucket counts of `table`'s row plus those of the row upserted
    into it (`excluded`), added bucket by bucket: a JSON object of counts by bucket."""
    return (f"(SELECT COALESCE(jsonb_object_agg(key, n), '{{}}')::text FROM "
            f"(SELECT key, sum(value::bigint) AS n FROM (SELECT * FROM "
            f'json_each_text("{table}".buckets::json) UNION ALL SELECT * FROM '
            f"json_each_text(excluded.buckets::json)) AS b GROUP BY key) AS s)")


def _stored_buckets(cursor: Any, table: str, key: Sequence[str], keys: Iterable[Key]
                    ) -> Iterator[tuple[Key, dict[str, int]]]:
    """SQLite, under the write lock: each of `keys` stored in `table`, with its buckets
    as the row's JSON has them (bucket numbers as text keys)."""
    ordered = sorted(keys)
    names = ", ".join(key)
    row = f"({', '.join('?' * len(key))})"
    for start in range(0, len(ordered), READ_CHUNK):
        chunk = ordered[start:start + READ_CHUNK]
        # CROSS JOIN: the keys first, each row found by the primary key (a row-value
        # IN list would scan the table).
        cursor.execute(f"WITH k ({names}) AS (VALUES {', '.join([row] * len(chunk))}) "
                       f'SELECT {names}, buckets FROM k CROSS JOIN "{table}" USING ({names})',
                       [v for k in chunk for v in k])
        for *k, text in cursor.fetchall():
            yield tuple(k), orjson.loads(text)


def _add_stored(cursor: Any, table: str, key: Sequence[str],
                by_key: dict[Key, dict[int, int]]) -> None:
    """SQLite, under the write lock: add the buckets stored in `table` to `by_key`'s."""
    for k, stored in _stored_buckets(cursor, table, key, by_key):
        counts = by_key[k]
        for bucket, n in stored.items():
            b = int(bucket)
            counts[b] = counts.get(b, 0) + n


def _merge_stored(cursor: Any, table: str, key: Sequence[str],
                  rollups: dict[Key, list[Any]]) -> None:
    """SQLite, under the write lock: add the buckets stored in `table` to those of
    `rollups` ([count, errors, duration sum, {bucket: count}] per key, the buckets
    by their JSON keys, text: nothing to convert on the way in or out)."""
    for k, stored in _stored_buckets(cursor, table, key, rollups):
        counts = rollups[k][3]
        for bucket, n in stored.items():
            counts[bucket] = counts.get(bucket, 0) + n


def upsert_in_row(cursor: Any, dialect: str, table: str, key: Sequence[str],
                  key_types: Sequence[str], rollups: dict[Key, list[Any]]) -> None:
    """Add `rollups` ([count, error count, duration sum in ms, {bucket: count}] per key,
    each bucket by its JSON key: text) to `table`, whose rows hold their buckets: the
    layout of upsert_pair without a latency table, for counts already gathered per key
    (the operation and edge rollups, storage/writer/operations.py), so no bucket is
    keyed twice on the way."""
    if dialect == "postgresql":
        merged = merged_buckets_sql(table)
    else:
        _merge_stored(cursor, table, key, rollups)
        merged = "excluded.buckets"
    names = ", ".join(key)
    upsert_rows(cursor, dialect, table,
                (*key, "count", "error_count", "duration_sum_ms", "buckets"),
                (*key_types, "int8", "int8", "float8", "text"),
                f"ON CONFLICT ({names}) DO UPDATE SET "
                f'count = "{table}".count + excluded.count, '
                f'error_count = "{table}".error_count + excluded.error_count, '
                f'duration_sum_ms = "{table}".duration_sum_ms + excluded.duration_sum_ms, '
                f"buckets = {merged}",
                [(*k, c, e, s, buckets_json(b)) for k, (c, e, s, b) in sorted(rollups.items())])


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
        if dialect == "postgresql":
            merged = merged_buckets_sql(counts)
        else:
            _add_stored(cursor, counts, key, by_key)
            merged = "excluded.buckets"
        upsert_rows(cursor, dialect, counts,
                    (*key, "count", "error_count", "duration_sum_ms", "buckets"),
                    (*key_types, "int8", "int8", "float8", "text"),
                    f"{update}, buckets = {merged}",
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
