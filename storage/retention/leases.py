"""Leases on maintenance work that one collector of a database does at a time (the
retention sweep): a row per kind of work in `maintenance_leases`, taken by an atomic
UPDATE that succeeds only where the lease has expired or is the holder's already.
One statement on both engines: SQLite runs it under its write lock, PostgreSQL
locks the row, so of two collectors asking together exactly one gets it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from storage.store import Store

_CREATE = text("INSERT INTO maintenance_leases (name, holder, expires_us) "
               "VALUES (:name, '', 0) ON CONFLICT (name) DO NOTHING")
_TAKE = text("UPDATE maintenance_leases SET holder = :holder, expires_us = :until "
             "WHERE name = :name AND (expires_us < :now OR holder = :holder)")
_RELEASE = text("UPDATE maintenance_leases SET expires_us = 0 "
                "WHERE name = :name AND holder = :holder")


def renew(conn: Any, name: str, holder: str, now_us: int, ttl_us: int) -> bool:
    """Take or extend the lease inside the caller's transaction; whether it is ours
    until `now_us + ttl_us`."""
    taken = conn.execute(_TAKE, {"name": name, "holder": holder, "now": now_us,
                                 "until": now_us + ttl_us})
    return bool(taken.rowcount)


def take(store: Store, name: str, holder: str, now_us: int, ttl_us: int) -> bool:
    """Take the lease in a transaction of its own (the row made on first use)."""
    with store.writer.begin() as conn:
        return take_in(conn, name, holder, now_us, ttl_us)


def take_in(conn: Any, name: str, holder: str, now_us: int, ttl_us: int) -> bool:
    """Take the lease inside the caller's transaction (the row made on first use),
    for work that starts in the same transaction (the cron checker's turn)."""
    conn.execute(_CREATE, {"name": name})
    return renew(conn, name, holder, now_us, ttl_us)


def release(store: Store, name: str, holder: str) -> None:
    """Let another collector take it at once, if it is still ours."""
    with store.writer.begin() as conn:
        conn.execute(_RELEASE, {"name": name, "holder": holder})


def holder_of(store: Store, name: str) -> tuple[str, int] | None:
    """(holder, expires_us) of the lease, None if never taken."""
    with store.reader.connect() as conn:
        row = conn.execute(text("SELECT holder, expires_us FROM maintenance_leases "
                                "WHERE name = :name"), {"name": name}).first()
    return None if row is None else (str(row[0]), int(row[1]))
