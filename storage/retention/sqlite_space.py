"""Giving a SQLite file's free pages back to the disk (docs/storage.md, "Retention").

Pages that deleted rows leave are kept in the file's free list and reused by later
writes, so at steady state the file stops growing by itself; incremental vacuum
also gives back what a peak left, in bounded steps. New files are made with
`auto_vacuum=INCREMENTAL` (storage/sqlite.py); a file made before that needs one
`vacuum` (a full rewrite) to become so.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from storage.store import Store

INCREMENTAL = 2  # PRAGMA auto_vacuum's answer for INCREMENTAL
STEP_PAGES = 1024  # pages given back per transaction: 4 MiB, a few milliseconds
# Free pages kept, as a share of the file: what the writer fills again before the
# next sweep at steady state (a sweep frees what arrived in one interval). Giving
# those back would only move pages about to grow the file again; a peak's surplus
# (less traffic, a shorter setting) goes.
KEEP_FREE = 0.1


@dataclass(frozen=True)
class Space:
    page_size: int
    pages: int
    free_pages: int
    auto_vacuum: int


def space(store: Store) -> Space:
    with store.reader.connect() as conn:
        def pragma(name: str) -> int:
            return int(conn.exec_driver_sql(f"PRAGMA {name}").scalar_one())
        return Space(pragma("page_size"), pragma("page_count"), pragma("freelist_count"),
                     pragma("auto_vacuum"))


def _driver(conn: Any) -> Any:
    return conn.connection.driver_connection


def give_back(store: Store, step_pages: int = STEP_PAGES, keep_free: float = KEEP_FREE,
              stop: threading.Event | None = None) -> int:
    """Shrink an incremental file by its free pages past `keep_free` of its pages,
    `step_pages` per transaction with a pause between (the writer takes the lock
    meanwhile); the pages given back. Nothing on a file that is not incremental."""
    if store.dialect != "sqlite" or space(store).auto_vacuum != INCREMENTAL:
        return 0
    stop = stop or threading.Event()
    given = 0
    with store.writer.connect() as conn:
        driver = _driver(conn)
        while not stop.is_set():
            free = int(driver.execute("PRAGMA freelist_count").fetchone()[0])
            pages = int(driver.execute("PRAGMA page_count").fetchone()[0])
            surplus = free - int(pages * keep_free)
            if surplus <= 0:
                break
            started = time.monotonic()
            # A script, not execute(): the sqlite3 module steps a statement once, and
            # incremental_vacuum gives back one page per step.
            step = min(surplus, int(step_pages))
            driver.executescript(f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({step}); "
                                 "COMMIT;")
            given += step
            stop.wait(time.monotonic() - started)
    return given


def vacuum(store: Store) -> Space:
    """Rewrite the whole file as incremental (once, for a file made before it): holds
    the write lock for as long as the rewrite takes and needs as much free disk as
    the file's size. Returns the space after."""
    if store.dialect != "sqlite":
        raise ValueError("vacuum is for SQLite files; PostgreSQL runs its own autovacuum")
    with store.writer.connect() as conn:
        driver = _driver(conn)
        driver.execute("PRAGMA auto_vacuum=INCREMENTAL")
        driver.execute("VACUUM")
    return space(store)
