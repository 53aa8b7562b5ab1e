"""A SQLite file's free pages (storage/retention/sqlite_space.py): new files are incremental,
the sweep's freed pages are given back, and an old file becomes incremental with one
VACUUM."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from storage import keys
from storage.retention import sqlite_space, sweep
from storage.store import Store
from tests.support import rows

NOW = 1_795_168_800
DAY = 86400
KEEP = {"spans": 7 * DAY, "logs": 7 * DAY, "metric_points": 7 * DAY,
        "error_occurrences": 30 * DAY, "rollups": 90 * DAY, "deploys": 365 * DAY,
        "check_ins": 30 * DAY}


def fill(store: Store, n: int, age_s: int) -> None:
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "shop")
        rows.insert(conn, "logs", [rows.row("logs", i, project_id=project,
                                            time_ns=(NOW - age_s) * 10**9 + i,
                                            body_text="x" * 500, body=b"y" * 1000)
                                   for i in range(n)])


def test_new_files_are_incremental_and_give_freed_pages_back(empty_sqlite_url: str) -> None:
    store = Store(empty_sqlite_url)
    store.upgrade()
    try:
        assert sqlite_space.space(store).auto_vacuum == sqlite_space.INCREMENTAL
        fill(store, 3000, 30 * DAY)
        before = sqlite_space.space(store)
        outcome = sweep.sweep(store, sweep.Policy(KEEP), "me", now_s=NOW)
        assert outcome.deleted["logs"] == 3000
        swept = sqlite_space.space(store)
        assert swept.free_pages > 500 and swept.pages == before.pages
        # A reserve for the writer to fill again is kept...
        sqlite_space.give_back(store, step_pages=100, keep_free=0.5)
        kept = sqlite_space.space(store)
        assert 0 < kept.free_pages <= kept.pages // 2 + 1 and kept.pages < swept.pages
        # ...or none, in several transactions of 100 pages.
        given = sqlite_space.give_back(store, step_pages=100, keep_free=0)
        after = sqlite_space.space(store)
        assert after.free_pages == 0 and given == kept.free_pages
        # (and the pointer-map pages that tracked them)
        assert after.pages <= before.pages - swept.free_pages
    finally:
        store.dispose()


def test_an_old_file_is_made_incremental_by_one_vacuum(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # a file made before: no auto_vacuum
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE before_us (x)")
    store = Store(f"sqlite:///{path}")
    store.upgrade()
    try:
        assert sqlite_space.space(store).auto_vacuum == 0
        fill(store, 2000, 30 * DAY)
        sweep.sweep(store, sweep.Policy(KEEP), "me", now_s=NOW)
        freed = sqlite_space.space(store)
        assert freed.free_pages > 0
        assert sqlite_space.give_back(store) == 0  # not incremental: nothing to do
        after = sqlite_space.vacuum(store)
        assert after.auto_vacuum == sqlite_space.INCREMENTAL and after.free_pages == 0
        assert after.pages < freed.pages
    finally:
        store.dispose()
