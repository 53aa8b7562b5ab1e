"""Dashboard sessions, in `dashboard_sessions`: one row per logged-in session, keyed
by the SHA-256 of its random token (the token itself lives only in the browser's
cookie). Several collectors share the table, so a logout through one of them ends
the session on all of them; expired rows are deleted whenever a session is made.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sqlalchemy import Connection, and_, delete, select

from storage import schema
from storage.accounts import project_roles
from storage.accounts.roles import ROLES, role_in
from storage.accounts.tokens import Token
from storage.store import Store

_T = schema.dashboard_sessions
_U = schema.users


@dataclass(frozen=True)
class Login:
    """Who a session or token is: a team account, or (user_id None) the admin token
    or a service token."""
    user_id: int | None
    email: str
    role: str
    # The OpenID provider a session logged in through (its logout ends there too).
    provider: str | None = None
    # The API token a request came with (storage/accounts/tokens.py): what it may do
    # is also limited by its scopes and projects (dashboard/access.py `authorize`).
    token: Token | None = None
    # A team account's roles in single projects, by project id, above `role`.
    project_roles: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}),
                                             hash=False)

    def role_in(self, project_id: int) -> str:
        """This login's role in the project (storage/accounts/roles.py `role_in`): a
        personal token is held to it too."""
        return role_in(self.role, self.project_roles, project_id)

    def highest_role(self) -> str:
        """Its role in the project where it has the most."""
        return max([self.role, *self.project_roles.values()], key=ROLES.index)


ADMIN_TOKEN = Login(None, "admin token", "admin")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create(store: Store, token: str, now_us: int, expires_us: int,
           user_id: int | None = None, provider: str | None = None) -> None:
    with store.writer.begin() as conn:
        conn.execute(delete(_T).where(_T.c.expires_us <= now_us))
        conn.execute(_T.insert(), {"token_hash": token_hash(token), "created_us": now_us,
                                   "expires_us": expires_us, "user_id": user_id,
                                   "provider": provider})


def lookup(store: Store, token: str, now_us: int) -> Login | None:
    """Who an unexpired session is; None for none, or for a disabled account's. The
    role is read from the account each time, so a change applies at once."""
    with store.reader.connect() as conn:
        row = conn.execute(select(_T.c.user_id, _T.c.provider, _U.c.email, _U.c.role,
                                  _U.c.disabled_us)
                           .select_from(_T.outerjoin(_U, _U.c.id == _T.c.user_id))
                           .where(and_(_T.c.token_hash == token_hash(token),
                                       _T.c.expires_us > now_us))).first()
        if row is None:
            return None
        if row.user_id is None:
            return ADMIN_TOKEN
        if row.email is None or row.disabled_us is not None:
            return None
        return Login(row.user_id, row.email, row.role, row.provider,
                     project_roles=MappingProxyType(project_roles.of_user(conn, row.user_id)))


def of_account(store: Store, user_id: int, email: str, role: str,
               token: Token | None = None) -> Login:
    """The login of an account (a password login, a personal token), with its
    project roles read now."""
    with store.reader.connect() as conn:
        roles = project_roles.of_user(conn, user_id)
    return Login(user_id, email, role, token=token, project_roles=MappingProxyType(roles))


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
