"""Projects and their ingest keys. Only a SHA-256 of each key is stored.

A key made, revoked or rotated (by `sounding keys` or the setup page) and a project
made with it are recorded in the audit log in their transaction, by the key's id;
keys of the configuration file, added at every start, are not: the file is their
record.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, and_, func, or_, select, update

# Re-exported (`as`): callers know them from here.
from model.keyhash import hash_key as hash_key
from model.keyhash import key_id_of as key_id_of
from model.timeutil import now_us
from storage import schema
from storage.audit.log import SYSTEM, Actor, Target, record
from storage.store import Store
from storage.upsert import insert

KEY_PREFIX = "snd_"
# What a key may hold to go in a Sentry DSN: several SDKs read the DSN's public key
# as word characters only. Keys made before this rule may hold `-` (URL-safe base64):
# they keep working as Bearer keys, but cannot go in a DSN.
DSN_SAFE = re.compile(r"\w+", re.ASCII)


def active(now: int | None = None) -> ColumnElement[bool]:
    """A key is active until its revocation time: none, or one still to come (a key
    rotated with a grace period, `sounding keys rotate --revoke-after`)."""
    k = schema.api_keys
    return or_(k.c.revoked_us.is_(None), k.c.revoked_us > (now_us() if now is None else now))


def new_key(sentry: bool = False) -> str:
    """A random key of word characters only: `snd_` + 48 hex digits (192 bits), or
    with `sentry` 32 hex digits (128 bits), the form Sentry itself issues."""
    return secrets.token_hex(16) if sentry else KEY_PREFIX + secrets.token_hex(24)


def dsn_safe(key: str) -> bool:
    return DSN_SAFE.fullmatch(key) is not None


def dsn(key: str, address: str, project_id: int) -> str:
    """The Sentry DSN of a key: `address` is the ingest listener's
    `scheme://host:port` (or `host:port`, read as http)."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "http", address
    return f"{scheme}://{key}@{rest.rstrip('/')}/{project_id}"


def ensure_project(conn: Connection, name: str, actor: Actor | None = None) -> int:
    """The project's id, made if missing (recorded in the audit log as made by
    `actor`, when one is given)."""
    p = schema.projects
    made = conn.execute(insert(conn.dialect.name, p).on_conflict_do_nothing()
                        .returning(p.c.id), {"name": name, "created_us": now_us()}).first()
    if made is not None and actor is not None:
        record(conn, actor, "project.create", Target("project", made[0], int(made[0])),
               after={"name": name})
    project_id = conn.execute(select(p.c.id).where(p.c.name == name)).scalar_one()
    return int(project_id)


def add_key(conn: Connection, project: str, key: str, actor: Actor | None = None) -> str:
    """Register `key` for `project` (created if needed); idempotent. Returns the key id.
    With `actor`, the project (if made now) and the key are recorded in the audit log."""
    project_id = ensure_project(conn, project, actor)
    key_hash = hash_key(key)
    k = schema.api_keys
    existing = conn.execute(select(k.c.project_id).where(k.c.key_hash == key_hash)).first()
    if existing is not None and existing.project_id != project_id:
        raise ValueError(f"key {key_id_of(key_hash)} already belongs to another project")
    added = conn.execute(insert(conn.dialect.name, k).on_conflict_do_nothing()
                         .returning(k.c.key_id), {
        "project_id": project_id, "key_hash": key_hash, "key_id": key_id_of(key_hash),
        "created_us": now_us()}).first()
    if added is not None and actor is not None:
        record(conn, actor, "key.create", Target("key", added[0], project_id),
               after={"project": project})
    return key_id_of(key_hash)


def create_key(store: Store, project: str, sentry: bool = False,
               actor: Actor = SYSTEM) -> tuple[str, str]:
    """A new random key for `project` (`sentry`: in Sentry's form, see new_key):
    (key, key id). The key is shown once, never stored."""
    key = new_key(sentry)
    with store.writer.begin() as conn:
        key_id = add_key(conn, project, key, actor)
    return key, key_id


def project_id_of(store: Store, name: str) -> int | None:
    p = schema.projects
    with store.reader.connect() as conn:
        found = conn.execute(select(p.c.id).where(p.c.name == name)).scalar_one_or_none()
    return None if found is None else int(found)


@dataclass(frozen=True)
class KeyInfo:
    key_id: str
    project: str
    created_us: int
    revoked_us: int | None


def list_keys(store: Store) -> list[KeyInfo]:
    k, p = schema.api_keys, schema.projects
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(k.c.key_id, p.c.name, k.c.created_us, k.c.revoked_us)
            .join(p, p.c.id == k.c.project_id)
            .order_by(p.c.name, k.c.created_us)
        ).all()
    return [KeyInfo(r.key_id, r.name, r.created_us, r.revoked_us) for r in rows]


def revoke_key(store: Store, key_id: str, actor: Actor = SYSTEM) -> int:
    """Revoke every active key whose id starts with `key_id` (one due to be revoked
    later too: now); returns how many (each recorded in the audit log)."""
    k = schema.api_keys
    if len(key_id) < 6:
        raise ValueError("give at least 6 characters of the key id")
    now = now_us()
    with store.writer.begin() as conn:
        revoked = conn.execute(
            update(k).where(and_(k.c.key_id.startswith(key_id, autoescape=True),
                                 active(now)))
            .values(revoked_us=now).returning(k.c.key_id, k.c.project_id)).all()
        for row in revoked:
            record(conn, actor, "key.revoke", Target("key", row.key_id, int(row.project_id)),
                   after={"revoked_us": now}, at_us=now)
    return len(revoked)


def project_for_hash(store: Store, key_hash: str) -> int | None:
    k = schema.api_keys
    with store.reader.connect() as conn:
        row = conn.execute(
            select(k.c.project_id, k.c.key_hash)
            .where(and_(k.c.key_hash == key_hash, active()))
        ).first()
    # The index lookup found the row; compare in constant time anyway, so that no
    # timing of ours depends on how much of a guessed hash matched.
    if row is None or not secrets.compare_digest(row.key_hash, key_hash):
        return None
    return int(row.project_id)


def active_keys(store: Store, limit: int) -> dict[str, int]:
    """{key hash: project id} of up to `limit` active keys."""
    k = schema.api_keys
    with store.reader.connect() as conn:
        rows = conn.execute(select(k.c.key_hash, k.c.project_id)
                            .where(active()).limit(limit)).all()
    return {row.key_hash: int(row.project_id) for row in rows}


def active_key_count(store: Store) -> int:
    k = schema.api_keys
    with store.reader.connect() as conn:
        return int(conn.execute(
            select(func.count()).select_from(k).where(active())).scalar_one())


def rotate_key(store: Store, project: str, revoke_at_us: int, sentry: bool = False,
               actor: Actor = SYSTEM) -> tuple[str, str, int]:
    """A new key for an existing `project`, and its other active keys revoked at
    `revoke_at_us` (now, or later for a grace period; a key already due sooner keeps
    its time), in one transaction: (key, key id, how many keys were scheduled)."""
    k = schema.api_keys
    project_id = project_id_of(store, project)
    if project_id is None:
        raise ValueError(f"no project named {project!r}")
    key = new_key(sentry)
    with store.writer.begin() as conn:
        key_id = add_key(conn, project, key)
        scheduled = conn.execute(
            update(k).where(and_(k.c.project_id == project_id, k.c.key_hash != hash_key(key),
                                 or_(k.c.revoked_us.is_(None),
                                     k.c.revoked_us > max(revoke_at_us, now_us()))))
            .values(revoked_us=revoke_at_us).returning(k.c.key_id)).scalars().all()
        record(conn, actor, "key.rotate", Target("key", key_id, project_id),
               after={"project": project, "older_keys": sorted(scheduled),
                      "older_revoked_us": revoke_at_us})
    return key, key_id, len(scheduled)
