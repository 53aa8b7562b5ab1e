"""The pragmas of every SQLite connection (storage/sqlite.py)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from storage import sqlite


def _open(path: Path, timeout: float = 30) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    sqlite.apply_pragmas(conn, "NORMAL")
    return conn


def test_a_new_file_is_incremental_and_in_wal_mode(tmp_path: Path) -> None:
    conn = _open(tmp_path / "new.db")
    conn.execute("CREATE TABLE t (a)")
    assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # INCREMENTAL
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_a_connection_opens_at_once_while_another_holds_the_write_lock(tmp_path: Path) -> None:
    writer = _open(tmp_path / "busy.db")
    writer.execute("CREATE TABLE t (a)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    # Setting auto_vacuum on a file that is already incremental takes the write lock:
    # a reader opened now would wait for the writer's commit (here: for ever).
    started = time.monotonic()
    reader = _open(tmp_path / "busy.db", timeout=2)
    assert time.monotonic() - started < 1
    assert reader.execute("SELECT count(*) FROM t").fetchone() == (0,)
    writer.execute("COMMIT")
    reader.close()
    writer.close()


def test_bytes_bind_as_the_same_blob(tmp_path: Path) -> None:
    """bytes go through the registered adapter (bytes.__bytes__, the same object), which
    SQLite stores as a BLOB: read back as bytes, equal, typed blob, found by equality;
    an empty one is a BLOB too, not NULL."""
    conn = _open(tmp_path / "blob.db")
    conn.execute("CREATE TABLE t (a BLOB)")
    conn.executemany("INSERT INTO t VALUES (?)", [(b"\x00\x01k",), (b"",)])
    assert conn.execute("SELECT a, typeof(a) FROM t WHERE a = ?", (b"\x00\x01k",)).fetchall(
        ) == [(b"\x00\x01k", "blob")]
    assert conn.execute("SELECT instr(a, ?) FROM t WHERE length(a) = 3", (b"k",)).fetchone(
        ) == (3,)
    assert conn.execute("SELECT typeof(a) FROM t WHERE length(a) = 0").fetchall() == [("blob",)]
    conn.close()
