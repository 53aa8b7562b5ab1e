"""An account's roles in single projects (`user_project_roles`), above its global
role (storage/accounts/roles.py `role_in`). An admin sets them (the Users page,
`sounding users set-role --project`); an account of single sign-on has them replaced
at every login by its provider's claim (storage/accounts/identities.py). Each change
is recorded in the audit log as `user.role`, with the account's project roles (by
project name) before and after.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Connection, and_, delete, select

from storage import schema
from storage.accounts.roles import PROJECT_ROLES
from storage.audit.log import Actor, Target, record
from storage.store import Store

_R = schema.user_project_roles
_P = schema.projects
_U = schema.users


def of_user(conn: Connection, user_id: int) -> dict[int, str]:
    """The account's roles by project id."""
    return {int(r.project_id): r.role for r in conn.execute(
        select(_R.c.project_id, _R.c.role).where(_R.c.user_id == user_id))}


def named(conn: Connection, user_id: int) -> dict[str, str]:
    """The account's roles by project name (what pages and the audit log show)."""
    return {r.name: r.role for r in conn.execute(
        select(_P.c.name, _R.c.role).join(_P, _P.c.id == _R.c.project_id)
        .where(_R.c.user_id == user_id).order_by(_P.c.name))}


def all_named(store: Store) -> dict[int, dict[str, str]]:
    """Every account's roles by project name, by account id (the Users page)."""
    found: dict[int, dict[str, str]] = {}
    with store.reader.connect() as conn:
        for r in conn.execute(select(_R.c.user_id, _P.c.name, _R.c.role)
                              .join(_P, _P.c.id == _R.c.project_id).order_by(_P.c.name)):
            found.setdefault(int(r.user_id), {})[r.name] = r.role
    return found


def project_ids(conn: Connection, names: Mapping[str, str]) -> dict[int, str]:
    """`names` (project name -> role) by project id; names of no project are left out
    (a provider's map may name a project made later)."""
    if not names:
        return {}
    rows = conn.execute(select(_P.c.id, _P.c.name).where(_P.c.name.in_(list(names))))
    return {int(r.id): names[r.name] for r in rows}


def replace(conn: Connection, user_id: int, roles: Mapping[int, str]) -> None:
    """Make the account's project roles exactly `roles` (by project id)."""
    conn.execute(delete(_R).where(_R.c.user_id == user_id))
    if roles:
        conn.execute(_R.insert(), [{"user_id": user_id, "project_id": p, "role": r}
                                   for p, r in roles.items()])


def delete_of_user(conn: Connection, user_id: int) -> None:
    conn.execute(delete(_R).where(_R.c.user_id == user_id))


def set_role(store: Store, email: str, project: str, role: str, actor: Actor) -> bool:
    """Set the account's role in `project` (`none`: remove it, leaving the global role);
    False for no such account; ValueError for no such project or role."""
    if role != "none" and role not in PROJECT_ROLES:
        raise ValueError(f"a project role must be one of none, {', '.join(PROJECT_ROLES)}, "
                         f"not {role!r}")
    with store.writer.begin() as conn:
        user = conn.execute(select(_U.c.id, _U.c.email).where(
            _U.c.email == email.strip().lower())).first()
        if user is None:
            return False
        project_id = conn.execute(select(_P.c.id).where(_P.c.name == project)).scalar()
        if project_id is None:
            raise ValueError(f"there is no project named {project!r}")
        before = named(conn, user.id)
        conn.execute(delete(_R).where(and_(_R.c.user_id == user.id,
                                           _R.c.project_id == project_id)))
        if role != "none":
            conn.execute(_R.insert().values(user_id=user.id, project_id=project_id, role=role))
        after = named(conn, user.id)
        if after != before:
            record(conn, actor, "user.role", Target("user", user.email),
                   before={"projects": before}, after={"projects": after})
    return True
