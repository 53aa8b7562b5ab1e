"""The shared bucket and quota count of a (project, category): a slice of tokens lent
in one short transaction, by the lending rule of model/limits.py (`lend_bucket`),
so that every process of every collector on the database spends from one bucket.

The row is locked for the transaction (PostgreSQL `SELECT ... FOR UPDATE`; SQLite's
BEGIN IMMEDIATE holds the database's write lock): of two collectors lending at once,
the second reads what the first left. The clock is each collector's own (epoch
seconds): clocks apart by a second lend a second more or less of the rate.
"""

from __future__ import annotations

import time

from sqlalchemy import text

from model.limits import Bucket, Grant, Limit, lend_bucket
from storage.store import Store

_CREATE = text("INSERT INTO limit_buckets (project_id, category, tokens, last_s, period, used) "
               "VALUES (:project, :category, :tokens, :now, 0, 0) "
               "ON CONFLICT (project_id, category) DO NOTHING")
_READ = ("SELECT tokens, last_s, period, used FROM limit_buckets "
         "WHERE project_id = :project AND category = :category")
_WRITE = text("UPDATE limit_buckets SET tokens = :tokens, last_s = :last, period = :period, "
              "used = :used WHERE project_id = :project AND category = :category")


def lend(store: Store, project_id: int, category: str, limit: Limit, want: float,
         need: float, now: float | None = None) -> Grant:
    """Lend up to `want` tokens (at least `need` when any are left) out of the shared
    bucket; blocking, in a thread."""
    now = time.time() if now is None else now
    key = {"project": project_id, "category": category}
    read = text(_READ + (" FOR UPDATE" if store.dialect == "postgresql" else ""))
    with store.writer.begin() as conn:
        row = conn.execute(read, key).first()
        if row is None:
            conn.execute(_CREATE, {**key, "tokens": limit.burst, "now": now})
            row = conn.execute(read, key).first()
            assert row is not None
        bucket = Bucket(float(row[0]), float(row[1]), int(row[2]), int(row[3]))
        granted = lend_bucket(bucket, limit, want, need, now)
        conn.execute(_WRITE, {**key, "tokens": bucket.tokens, "last": bucket.last,
                              "period": bucket.period, "used": bucket.used})
    return granted


def used(store: Store, project_id: int, category: str) -> tuple[int, int]:
    """(period, used) of a category's quota count, (0, 0) before any lending."""
    with store.reader.connect() as conn:
        row = conn.execute(text("SELECT period, used FROM limit_buckets "
                                "WHERE project_id = :project AND category = :category"),
                           {"project": project_id, "category": category}).first()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))
