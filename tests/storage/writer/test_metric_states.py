"""The SQLite writer's memory of conversion states (storage/writer/metric_states.py's
StateCache): used only while it is the store's truth. Written as the writer process
writes (exporters/sql/writer.py): one long-lived BatchWriter and connection,
BEGIN IMMEDIATE, COMMIT, then `committed()`."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from model.records import GAUGE, Batch
from storage import sqlite
from storage.store import Store
from storage.wire.batch import encode_batch
from storage.writer.commit import BatchWriter
from tests.storage.writer.test_points import T0, S, point


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "cache.db"
    store = Store(f"sqlite:///{path}")
    store.upgrade()
    store.dispose()
    return path


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    sqlite.apply_pragmas(conn, "NORMAL")
    return conn


def write(writer: BatchWriter, conn: sqlite3.Connection, time_s: int, value: float,
          commit: bool = True, **kind: Any) -> None:
    cursor = conn.cursor()
    cursor.execute("BEGIN IMMEDIATE")
    writer.write(cursor, [encode_batch(Batch(1, metrics=[
        point(time_s=time_s, value=value, **kind)]))], 1)
    if commit:
        cursor.execute("COMMIT")
        writer.committed()
    else:
        cursor.execute("ROLLBACK")


def values(path: Path) -> list[tuple[int, float]]:
    with connect(path) as conn:
        rows: list[Any] = conn.execute(
            "SELECT time_ns, value FROM metric_points p JOIN metric_series s USING "
            "(project_id, series_key) WHERE s.name = 'requests' ORDER BY time_ns"
        ).fetchall()
    return [((t - T0) // S, v) for t, v in rows]


def test_one_writer_many_commits_and_a_restart_go_on_from_the_store(path: Path) -> None:
    conn, writer = connect(path), BatchWriter("sqlite")
    for time_s, value in ((60, 5), (120, 8), (180, 15)):
        write(writer, conn, time_s, value)
    # A restarted writer (no memory) reads the state the cached one kept writing.
    write(BatchWriter("sqlite"), connect(path), 240, 20)
    assert values(path) == [(60, 5.0), (120, 3.0), (180, 7.0), (240, 5.0)]


def test_a_state_another_connection_committed_is_read_again(path: Path) -> None:
    # Two collectors on one SQLite file take turns on one series.
    first, second = BatchWriter("sqlite"), BatchWriter("sqlite")
    first_conn, second_conn = connect(path), connect(path)
    write(first, first_conn, 60, 5)
    write(second, second_conn, 120, 8)
    write(first, first_conn, 180, 15)  # from 8, not from the 5 it remembers
    assert values(path) == [(60, 5.0), (120, 3.0), (180, 7.0)]


def test_a_new_connection_starts_without_memory(path: Path) -> None:
    writer = BatchWriter("sqlite")
    conn = connect(path)
    write(writer, conn, 60, 5)
    conn.close()
    write(BatchWriter("sqlite"), connect(path), 120, 8)
    # The writer reconnects: what it remembers is from before another's commit.
    write(writer, connect(path), 180, 15)
    assert values(path) == [(60, 5.0), (120, 3.0), (180, 7.0)]


def test_a_rolled_back_write_leaves_no_state_behind(path: Path) -> None:
    conn, writer = connect(path), BatchWriter("sqlite")
    write(writer, conn, 60, 5)
    write(writer, conn, 120, 8, commit=False)
    # A commit without cumulative points in between: nothing of the rolled back one.
    write(writer, conn, 150, 1, name="temp", kind=GAUGE, temporality=0, monotonic=False)
    write(writer, conn, 180, 15)
    assert values(path) == [(60, 5.0), (180, 10.0)]
