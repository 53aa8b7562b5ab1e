"""The storage extension applies the migrations at start, then makes the day
partitions of today and the next days on PostgreSQL (storage/partitions.py)."""

from __future__ import annotations

import asyncio
import time

from extensions.storage import StorageExtension
from storage.partitions import DAY_NS, PARTITIONED, drop_partitions_before, partitions
from storage.store import Store

FAR_FUTURE = 7_000_000_000 * 10**9


def test_start_makes_the_partitions_of_today_and_the_next_days(pg_url: str) -> None:
    store = Store(pg_url)
    store.upgrade()
    with store.writer.begin() as conn:  # as after a long stop: no day partition left
        for table in PARTITIONED:
            drop_partitions_before(conn, table, FAR_FUTURE)
    store.dispose()

    storage = StorageExtension("storage", {"url": pg_url, "sqlite_synchronous": "NORMAL",
                                           "sqlite_wal_max_bytes": 0})
    today = time.time_ns() // DAY_NS
    asyncio.run(storage.start())
    try:
        with storage.store.reader.connect() as conn:
            for table in PARTITIONED:
                days = {bounds[0] // DAY_NS for bounds in partitions(conn, table).values()
                        if bounds is not None}
                assert days >= set(range(today + 1, today + 4))
                assert days <= set(range(today, today + 5))  # today's: unless midnight passed
    finally:
        asyncio.run(storage.shutdown())
