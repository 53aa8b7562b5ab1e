"""API tokens (`api_tokens`): what a script sends as `Authorization: Bearer snd_…`.

A token is **personal** (it acts as its account, with the account's current role,
and never beyond its own scopes) or a **service** token (no account: only its scopes
limit it). Each has scopes (SCOPES), reaches all projects or only chosen ones, and
may expire. `Token.allows` is the one rule of what a token may do; the dashboard's
access check (dashboard/access.py `authorize`) asks it, and so should any later door
that takes tokens (source-map uploads: the `releases` scope).

The token is `snd_` (so that secret scanners can match it) and 43 characters of
`secrets.token_urlsafe(32)`: 256 random bits. It is shown once, at creation, and kept
as its SHA-256: a slow or salted hash guards guessable passwords, and a 256-bit random
token is not guessable, so a fast hash is the right one (and the tokens made before
scopes, kept the same way, still match). `last_used_us` is written at most once a
LAST_USED_EVERY_US per token, so that a busy script costs a read, not a write, per
request.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, and_, bindparam, delete, or_, select, update

from storage import schema
from storage.audit.log import Actor, Target, record
from storage.store import Store

PREFIX = "snd_"
# Least first, as the pages list them; what each allows is in docs/dashboard.md#api-tokens
# and in the dashboard's handlers (`read_scopes`, `write_scope`).
SCOPES = ("read", "releases", "project-admin", "ingest-admin", "admin")
# Allows everything the others do (and what needs an admin: accounts, tokens).
ADMIN = "admin"
MAX_NAME = 200
LAST_USED_EVERY_US = 60 * 1_000_000
_T = schema.api_tokens
_P = schema.api_token_projects
_U = schema.users
_PR = schema.projects


@dataclass(frozen=True)
class Token:
    id: int
    name: str
    user_id: int | None  # None: a service token
    scopes: frozenset[str]
    project_ids: frozenset[int] | None  # None: every project, now and to come
    created_us: int
    created_by: str
    expires_us: int | None
    last_used_us: int | None
    revoked_us: int | None
    # The account of a personal token: its email and current role (None for a service one).
    email: str | None = None
    role: str | None = None

    def allows(self, scope: str, project_id: int | None) -> bool:
        """Whether this token may act under `scope` in project `project_id` (None:
        beyond any one project: accounts, tokens, a new project; only a token over
        all projects may). The one rule of a token's reach."""
        if not self.has_scope(scope):
            return False
        if self.project_ids is None:
            return True
        return project_id is not None and project_id in self.project_ids

    def has_scope(self, scope: str) -> bool:
        """`scope` is one of this token's, or it has `admin`, which holds every scope."""
        return scope in self.scopes or ADMIN in self.scopes

    def reaches(self, project_id: int) -> bool:
        """Whether the project is one of this token's (for lists: what it may see)."""
        return self.project_ids is None or project_id in self.project_ids

    @property
    def kind(self) -> str:
        return "service" if self.user_id is None else "personal"

    def state(self, now_us: int) -> str:
        if self.revoked_us is not None:
            return "revoked"
        if self.expires_us is not None and self.expires_us <= now_us:
            return "expired"
        if self.user_id is not None and self.role is None:
            return "account disabled"
        return "active"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_scopes(scopes: Iterable[str]) -> frozenset[str]:
    """The scopes, each one of SCOPES and at least one; ValueError naming the others."""
    wanted = frozenset(s.strip() for s in scopes if s.strip())
    unknown = sorted(wanted - set(SCOPES))
    if unknown:
        raise ValueError(f"unknown scope {', '.join(map(repr, unknown))}: the scopes are "
                         f"{', '.join(SCOPES)}")
    if not wanted:
        raise ValueError(f"a token needs at least one scope: {', '.join(SCOPES)}")
    return wanted


def project_ids(store: Store, names: Iterable[str]) -> frozenset[int]:
    """The ids of the projects named; ValueError naming those that do not exist."""
    wanted = {n for n in names if n}
    with store.reader.connect() as conn:
        found = {r.name: r.id for r in conn.execute(
            select(_PR.c.id, _PR.c.name).where(_PR.c.name.in_(wanted)))}
    missing = sorted(wanted - set(found))
    if missing:
        raise ValueError(f"no project named {', '.join(map(repr, missing))}")
    return frozenset(found.values())


def create(store: Store, name: str, scopes: Iterable[str], now_us: int, actor: Actor,
           user_id: int | None = None, projects: Iterable[int] | None = None,
           expires_us: int | None = None) -> tuple[str, Token]:
    """A new token: (the token, to be shown once; what it is), made by `actor` (its
    `created_by`, and the audit log's `token.create`). `user_id` None makes a service
    token; `projects` None reaches every project. ValueError for bad input."""
    label = name.strip()
    if not label or len(label) > MAX_NAME or any(ord(c) < 0x20 for c in label):
        raise ValueError(f"a token's name must be 1 to {MAX_NAME} characters, with no "
                         "control characters")
    chosen = check_scopes(scopes)
    limited = None if projects is None else frozenset(projects)
    if limited is not None and not limited:
        raise ValueError("choose at least one project, or all projects")
    if expires_us is not None and expires_us <= now_us:
        raise ValueError("the expiry must be in the future")
    secret = PREFIX + secrets.token_urlsafe(32)
    with store.writer.begin() as conn:
        if user_id is not None and conn.execute(
                select(_U.c.id).where(_U.c.id == user_id)).first() is None:
            raise ValueError(f"no account {user_id}")
        if limited is not None:
            known = set(conn.execute(select(_PR.c.id).where(_PR.c.id.in_(limited))).scalars())
            if known != limited:
                raise ValueError(f"no project {', '.join(map(str, sorted(limited - known)))}")
        token_id = conn.execute(_T.insert().values(
            token_hash=token_hash(secret), name=label, user_id=user_id,
            scopes=" ".join(s for s in SCOPES if s in chosen), all_projects=limited is None,
            created_us=now_us, created_by=actor.name[:320], expires_us=expires_us
        ).returning(_T.c.id)).scalar_one()
        if limited:
            conn.execute(_P.insert(), [{"token_id": token_id, "project_id": p}
                                       for p in sorted(limited)])
        token = _tokens(conn, _T.c.id == token_id)[0]
        record(conn, actor, "token.create", Target("token", token.id), after=_shown(token),
               at_us=now_us)
    return secret, token


def _shown(token: Token) -> dict[str, object]:
    """What the audit log keeps of a token: never the token or its hash."""
    return {"name": token.name, "kind": token.kind, "user_id": token.user_id,
            "scopes": [s for s in SCOPES if s in token.scopes],
            "projects": "all" if token.project_ids is None else sorted(token.project_ids),
            "expires_us": token.expires_us}


def authenticate(store: Store, bearer: str, now_us: int) -> Token | None:
    """The token `bearer` is, when it works: not revoked, not expired, and a personal
    one's account enabled; None otherwise. Notes its use (at most once a minute).
    On every request a token comes with: one prepared query, and a write a minute."""
    if not bearer.startswith(PREFIX):
        return None
    with store.reader.connect() as conn:
        found = _build(conn.execute(_WORKING, {"hash": token_hash(bearer), "now": now_us}))
    if not found:
        return None
    token = found[0]
    if token.user_id is not None and token.role is None:
        return None  # a disabled account's
    if token.last_used_us is None or token.last_used_us <= now_us - LAST_USED_EVERY_US:
        with store.writer.begin() as conn:
            conn.execute(_NOTE_USE, {"token": token.id, "now": now_us,
                                     "before": now_us - LAST_USED_EVERY_US})
        token = replace(token, last_used_us=now_us)
    return token


def list_tokens(store: Store, user_id: int | None = None) -> list[Token]:
    """Every token (`user_id` None: an admin's view) or one account's, oldest first."""
    where = None if user_id is None else _T.c.user_id == user_id
    with store.reader.connect() as conn:
        return _tokens(conn, where)


def get(store: Store, token_id: int) -> Token | None:
    with store.reader.connect() as conn:
        found = _tokens(conn, _T.c.id == token_id)
    return found[0] if found else None


def revoke(store: Store, token_id: int, now_us: int, actor: Actor,
           user_id: int | None = None) -> bool:
    """Revoke a token (`user_id`: only if it is that account's), recorded as `actor`'s
    `token.revoke`; False when there is no such unrevoked token."""
    where = and_(_T.c.id == token_id, _T.c.revoked_us.is_(None))
    if user_id is not None:
        where = and_(where, _T.c.user_id == user_id)
    with store.writer.begin() as conn:
        if conn.execute(update(_T).where(where).values(revoked_us=now_us)).rowcount == 0:
            return False
        token = _tokens(conn, _T.c.id == token_id)[0]
        record(conn, actor, "token.revoke", Target("token", token_id), before=_shown(token),
               at_us=now_us)
        return True


def delete_of_user(conn: Connection, user_id: int) -> None:
    """An account's tokens, in the caller's transaction (the account is deleted)."""
    mine = select(_T.c.id).where(_T.c.user_id == user_id).scalar_subquery()
    conn.execute(delete(_P).where(_P.c.token_id.in_(mine)))
    conn.execute(delete(_T).where(_T.c.user_id == user_id))


# A token, its account and its projects (one row each; one row with no project for a
# token over all of them), in one query.
_SELECT = (select(_T, _U.c.email, _U.c.role, _U.c.disabled_us, _P.c.project_id)
           .select_from(_T.outerjoin(_U, _U.c.id == _T.c.user_id)
                        .outerjoin(_P, _P.c.token_id == _T.c.id))
           .order_by(_T.c.id))
_WORKING = _SELECT.where(
    _T.c.token_hash == bindparam("hash"), _T.c.revoked_us.is_(None),
    or_(_T.c.expires_us.is_(None), _T.c.expires_us > bindparam("now")))
_NOTE_USE = update(_T).where(
    _T.c.id == bindparam("token"),
    or_(_T.c.last_used_us.is_(None), _T.c.last_used_us <= bindparam("before"))
).values(last_used_us=bindparam("now"))


def _tokens(conn: Connection, where: Any) -> list[Token]:
    return _build(conn.execute(_SELECT if where is None else _SELECT.where(where)))


def _build(rows: Iterable[Any]) -> list[Token]:
    tokens: dict[int, Token] = {}
    chosen: dict[int, set[int]] = {}
    for r in rows:
        if r.id not in tokens:
            tokens[r.id] = Token(
                id=r.id, name=r.name, user_id=r.user_id, scopes=frozenset(r.scopes.split()),
                project_ids=None, created_us=r.created_us, created_by=r.created_by,
                expires_us=r.expires_us, last_used_us=r.last_used_us,
                revoked_us=r.revoked_us, email=r.email,
                role=None if r.disabled_us is not None else r.role)
        if not r.all_projects:
            mine = chosen.setdefault(r.id, set())
            if r.project_id is not None:
                mine.add(r.project_id)
    return [replace(t, project_ids=frozenset(chosen[i])) if i in chosen else t
            for i, t in tokens.items()]
