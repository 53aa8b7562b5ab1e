"""Secrets that every collector on one database shares, in `dashboard_secrets`.

- `admin_token_sha256`: the SHA-256 of the dashboard admin token that the first
  collector generated (when none is configured). The token itself is printed once
  and never stored.
- `scrub_hash_key`: the key of scrubbing's `hash` action (processors/scrub/).
- `cookie_secret`: the key that signs dashboard session cookies. It lives in the
  database rather than in each process so that a session made through one collector
  is valid on every collector sharing the database.

Creation is insert-if-missing, so when several collectors start at once exactly one
of them wins and every one of them then reads the same value.
"""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import Connection, select

from model.timeutil import now_us
from storage import schema
from storage.accounts import sessions
from storage.audit.log import SYSTEM, Actor, Target, record
from storage.store import Store
from storage.upsert import insert

ADMIN_TOKEN_HASH = "admin_token_sha256"
COOKIE_SECRET = "cookie_secret"
ADMIN_TOKEN_PREFIX = "sadm_"
# The key of the scrubbing `hash` action's HMAC (processors/scrub/): shared, so that
# a value hashes alike on every collector of one database and after a restart.
SCRUB_HASH_KEY = "scrub_hash_key"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_admin_token() -> str:
    return ADMIN_TOKEN_PREFIX + secrets.token_urlsafe(32)


def _read(conn: Connection, name: str) -> str | None:
    t = schema.dashboard_secrets
    value = conn.execute(select(t.c.value).where(t.c.name == name)).scalar_one_or_none()
    return None if value is None else str(value)


def _insert_if_missing(conn: Connection, name: str, value: str) -> bool:
    """True when this call created the row."""
    t = schema.dashboard_secrets
    # RETURNING, not rowcount: psycopg reports -1 for an INSERT that did nothing.
    created = conn.execute(
        insert(conn.dialect.name, t).on_conflict_do_nothing().returning(t.c.name),
        {"name": name, "value": value, "created_us": now_us()}).first()
    return created is not None


def ensure_cookie_secret(store: Store) -> str:
    with store.writer.begin() as conn:
        _insert_if_missing(conn, COOKIE_SECRET, secrets.token_hex(32))
        value = _read(conn, COOKIE_SECRET)
    assert value is not None
    return value


def ensure_scrub_hash_key(store: Store) -> str:
    with store.writer.begin() as conn:
        _insert_if_missing(conn, SCRUB_HASH_KEY, secrets.token_hex(32))
        value = _read(conn, SCRUB_HASH_KEY)
    assert value is not None
    return value


def ensure_admin_token(store: Store) -> str | None:
    """Create the admin token if the database has none; returns it only to the one
    caller that created it (to be shown once), None otherwise."""
    token = new_admin_token()
    with store.writer.begin() as conn:
        created = _insert_if_missing(conn, ADMIN_TOKEN_HASH, hash_token(token))
    return token if created else None


def rotate_admin_token(store: Store, actor: Actor = SYSTEM) -> str:
    """Replace the stored admin token and log every session out; returns the new
    token (shown once). Recorded in the audit log (never the token or its hash)."""
    token = new_admin_token()
    t = schema.dashboard_secrets
    with store.writer.begin() as conn:
        if not _insert_if_missing(conn, ADMIN_TOKEN_HASH, hash_token(token)):
            conn.execute(t.update().where(t.c.name == ADMIN_TOKEN_HASH)
                         .values(value=hash_token(token), created_us=now_us()))
        # The sessions' cookies carry a marker of the old token and no longer match
        # it; their rows are of no use any more.
        sessions.end_all(conn)
        record(conn, actor, "admin_token.rotate", Target("admin_token"))
    return token


def admin_token_hash(store: Store) -> str | None:
    with store.reader.connect() as conn:
        return _read(conn, ADMIN_TOKEN_HASH)
