"""Team accounts (`users`); their API tokens are storage/accounts/tokens.py's.

A password is kept only as an Argon2id hash (argon2-cffi: salt and parameters in the
encoded string, so stronger parameters later still verify old hashes, which are then
re-hashed on the next login). Disabling an account, deleting it or changing its
password ends its sessions on every collector; a disabled account's tokens stop
working, a deleted one's are deleted. Every change to an account is recorded in the
audit log (`user.*`) in its transaction, never with a password or a hash.
"""

from __future__ import annotations

import functools
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Connection, delete, func, select, update

from storage import schema
from storage.accounts import project_roles, tokens
from storage.accounts.roles import ROLES
from storage.audit.log import SYSTEM, Actor, Target, record
from storage.store import Store

MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # Argon2 hashes any length; this bounds the work a request can ask
_U = schema.users
_S = schema.dashboard_sessions
_I = schema.user_identities
_hasher = PasswordHasher()


@functools.cache
def _dummy() -> str:
    """Verified against when the email is unknown, so that an unknown address takes as
    long to refuse as a wrong password (no list of accounts by timing). Made at the
    first login rather than at import: an Argon2 hash is 0.1 s of CPU that every
    collector start and every command line would pay."""
    return _hasher.hash(secrets.token_urlsafe(16))


@dataclass(frozen=True)
class User:
    id: int
    email: str
    role: str
    created_us: int
    disabled_us: int | None


def normal_email(email: str) -> str:
    """The stored form of an address (case-insensitive), or ValueError."""
    address = email.strip().lower()
    local, at, domain = address.partition("@")
    if not at or not local or not domain or len(address) > 320 or any(
            c.isspace() or ord(c) < 0x20 for c in address):
        raise ValueError(f"{email!r} is not an email address")
    return address


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    return role


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise ValueError(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise ValueError(f"a password may have at most {MAX_PASSWORD} characters")
    return password


def _user(row: object) -> User:
    return User(row.id, row.email, row.role, row.created_us, row.disabled_us)  # type: ignore[attr-defined]


_COLUMNS = (_U.c.id, _U.c.email, _U.c.role, _U.c.created_us, _U.c.disabled_us)


def create(store: Store, email: str, password: str, role: str, now_us: int,
           actor: Actor = SYSTEM) -> User:
    address = normal_email(email)
    digest = _hasher.hash(check_password(password))
    check_role(role)
    with store.writer.begin() as conn:
        if conn.execute(select(_U.c.id).where(_U.c.email == address)).first():
            raise ValueError(f"there is already an account for {address}")
        user_id = conn.execute(_U.insert().values(
            email=address, password_hash=digest, role=role, created_us=now_us
        ).returning(_U.c.id)).scalar_one()
        record(conn, actor, "user.create", Target("user", address),
               after={"email": address, "role": role}, at_us=now_us)
    return User(int(user_id), address, role, now_us, None)


def count(store: Store) -> int:
    with store.reader.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(_U)).scalar_one())


def list_users(store: Store) -> list[User]:
    with store.reader.connect() as conn:
        return [_user(r) for r in conn.execute(select(*_COLUMNS).order_by(_U.c.email))]


def find(store: Store, email: str) -> User | None:
    try:
        address = normal_email(email)
    except ValueError:
        return None
    with store.reader.connect() as conn:
        row = conn.execute(select(*_COLUMNS).where(_U.c.email == address)).first()
    return None if row is None else _user(row)


def verify(store: Store, email: str, password: str) -> User | None:
    """The enabled account of this email and password, or None."""
    try:
        address = normal_email(email)
    except ValueError:
        address = ""
    with store.reader.connect() as conn:
        row = conn.execute(select(*_COLUMNS, _U.c.password_hash)
                           .where(_U.c.email == address)).first()
    # Too long a guess is no stored password (create refuses it): refused after the
    # same work as any other, bounded by the cut.
    dummy = _dummy()
    digest = dummy if row is None or len(password) > MAX_PASSWORD else row.password_hash
    try:
        _hasher.verify(digest, password[:MAX_PASSWORD])
    except (VerificationError, InvalidHashError):
        return None
    if row is None or row.disabled_us is not None or digest is dummy:
        return None
    if _hasher.check_needs_rehash(digest):
        with store.writer.begin() as conn:
            conn.execute(update(_U).where(_U.c.id == row.id)
                         .values(password_hash=_hasher.hash(password)))
    return _user(row)


def _end_sessions(conn: Connection, user_id: int) -> None:
    conn.execute(delete(_S).where(_S.c.user_id == user_id))


def _change(store: Store, email: str, values: dict[str, object], end: bool,
            action: str, actor: Actor, shown: dict[str, object] | None = None) -> bool:
    """Change the account (`values`), recording `action`; `shown`: its before and
    after, of the columns that may be shown (none for a password)."""
    user = find(store, email)
    if user is None:
        return False
    with store.writer.begin() as conn:
        conn.execute(update(_U).where(_U.c.id == user.id).values(**values))
        if end:
            _end_sessions(conn, user.id)
        before = None if shown is None else {k: getattr(user, k) for k in shown}
        if before is None or before != shown:  # a role set to what it was: no change
            record(conn, actor, action, Target("user", user.email), before=before,
                   after=shown)
    return True


def set_role(store: Store, email: str, role: str, actor: Actor = SYSTEM) -> bool:
    # Sessions read the role from the account on every request: nothing to end.
    return _change(store, email, {"role": check_role(role)}, False, "user.role", actor,
                   {"role": role})


def set_password(store: Store, email: str, password: str, actor: Actor = SYSTEM) -> bool:
    return _change(store, email, {"password_hash": _hasher.hash(check_password(password))},
                   True, "user.password", actor)


def disable(store: Store, email: str, now_us: int, actor: Actor = SYSTEM) -> bool:
    return _change(store, email, {"disabled_us": now_us}, True, "user.disable", actor,
                   {"disabled_us": now_us})


def enable(store: Store, email: str, actor: Actor = SYSTEM) -> bool:
    return _change(store, email, {"disabled_us": None}, False, "user.enable", actor,
                   {"disabled_us": None})


def delete_user(store: Store, email: str, actor: Actor = SYSTEM) -> bool:
    user = find(store, email)
    if user is None:
        return False
    with store.writer.begin() as conn:
        _end_sessions(conn, user.id)
        tokens.delete_of_user(conn, user.id)
        project_roles.delete_of_user(conn, user.id)
        conn.execute(delete(_I).where(_I.c.user_id == user.id))
        conn.execute(delete(_U).where(_U.c.id == user.id))
        record(conn, actor, "user.delete", Target("user", user.email),
               before={"email": user.email, "role": user.role})
    return True
