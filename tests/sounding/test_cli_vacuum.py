"""`sounding db vacuum`: an SQLite file made before retention becomes incremental."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.sounding.test_cli import sounding


def test_db_vacuum_makes_an_old_file_incremental(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # made without auto_vacuum, as before
        conn.execute("CREATE TABLE made_before (x)")
    done = sounding(f"sqlite:///{path}", "db", "vacuum")
    assert done.returncode == 0, done.stderr
    assert "incremental" in done.stdout
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)
        assert conn.execute("SELECT count(*) FROM maintenance_leases").fetchone() == (0,)
