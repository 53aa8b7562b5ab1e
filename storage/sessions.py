"""Dashboard sessions, in `dashboard_sessions`: one row per logged-in session, keyed
by the SHA-256 of its random token (the token itself lives only in the browser's
cookie). Several collectors share the table, so a logout through one of them ends
the session on all of them; expired rows are deleted whenever a session is made.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection, and_, delete, select

from storage import schema
from storage.store import Store

_T = schema.dashboard_sessions


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(store: Store, token: str, now_us: int, expires_us: int) -> None:
    with store.writer.begin() as conn:
        conn.execute(delete(_T).where(_T.c.expires_us <= now_us))
        conn.execute(_T.insert(), {"token_hash": token_hash(token), "created_us": now_us,
                                   "expires_us": expires_us})


def active(store: Store, token: str, now_us: int) -> bool:
    with store.reader.connect() as conn:
        return conn.execute(select(_T.c.token_hash).where(and_(
            _T.c.token_hash == token_hash(token), _T.c.expires_us > now_us))).first() is not None


def end(store: Store, token: str) -> None:
    with store.writer.begin() as conn:
        conn.execute(delete(_T).where(_T.c.token_hash == token_hash(token)))


def delete_expired(store: Store, now_us: int) -> None:
    with store.writer.begin() as conn:
        conn.execute(delete(_T).where(_T.c.expires_us <= now_us))


def end_all(conn: Connection) -> None:
    """Every session, in the caller's transaction (a rotated admin token)."""
    conn.execute(delete(_T))
