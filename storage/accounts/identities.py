"""Accounts made and kept by single sign-on (dashboard/sso.py): an OpenID provider's
subject (`sub`) tied to one account in `user_identities`.

An account is found by its identity, never by its email alone: an email can change
or be reused at the provider, a subject cannot. The first login of a subject makes
its account (just in time), or takes over the account of the same email when the
provider vouches for that email (`email_verified`); an unverified email that is
already an account is refused, since anyone able to set that address at the provider
would otherwise become its holder. The roles are the provider's at every login: the
global role, and the roles in single projects, replaced whole (a project role an
admin gave such an account by hand lasts until its next login).

Both are recorded in the audit log, made by the provider (a `system` actor named
after it): `user.create` for an account made just in time, `user.role` for roles
the provider's claim changed (with the project roles, by name, when there are any).

An account made here has no password (`NO_PASSWORD` is no Argon2 hash, so no
password verifies against it); an admin may still give it one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Connection, and_, delete, select, update

from storage import schema
from storage.accounts import project_roles
from storage.accounts.users import User, check_role, normal_email
from storage.audit.log import Actor, Target, record
from storage.store import Store

NO_PASSWORD = "!sso"
_U = schema.users
_I = schema.user_identities
_S = schema.dashboard_sessions


@dataclass(frozen=True)
class Claimed:
    """Who a provider says has logged in."""
    provider: str
    subject: str
    email: str
    email_verified: bool
    role: str | None  # global; None: the provider's claim maps to no Sounding role
    projects: dict[str, str] = field(default_factory=dict)  # project name -> role


class Refused(Exception):
    """A login the provider vouched for that Sounding refuses; the message says why,
    to the person refused."""


def login(store: Store, who: Claimed, now_us: int) -> User:
    """The account `who` logs in as, made or re-roled in one transaction; Refused
    otherwise. A known account whose claim now maps to no role has its sessions
    ended (committed, then refused): its holder was taken out of every group that
    gives access."""
    with store.writer.begin() as conn:
        outcome = _login(conn, who, now_us)
    if isinstance(outcome, Refused):
        raise outcome
    return outcome


_COLUMNS = (_U.c.id, _U.c.email, _U.c.role, _U.c.created_us, _U.c.disabled_us)


def provider_actor(provider: str) -> Actor:
    """Who the audit log says made an account or changed its role at a login: the
    identity provider, by its name in `dashboard.oidc.providers`."""
    return Actor.system(f"identity provider {provider}", f"oidc:{provider}")


def _login(conn: Connection, who: Claimed, now_us: int) -> User | Refused:
    row = conn.execute(select(*_COLUMNS).join(_I, _I.c.user_id == _U.c.id).where(
        and_(_I.c.provider == who.provider, _I.c.subject == who.subject))).first()
    if who.role is None:
        if row is not None:
            conn.execute(delete(_S).where(_S.c.user_id == row.id))
        return Refused("your account at the identity provider has no group or role that "
                       "gives access to Sounding; ask an administrator to add you")
    role = check_role(who.role)
    if row is None:
        try:
            address = normal_email(who.email)
        except ValueError:
            return Refused("the identity provider sent no usable email address "
                           f"({who.email!r}); Sounding names accounts by email")
        row = conn.execute(select(*_COLUMNS).where(_U.c.email == address)).first()
        if row is not None and not who.email_verified:
            return Refused(f"there is already an account for {address}, and the identity "
                           "provider does not say the address is verified; ask an "
                           "administrator")
        if row is None:
            user_id = conn.execute(_U.insert().values(
                email=address, password_hash=NO_PASSWORD, role=role, created_us=now_us
            ).returning(_U.c.id)).scalar_one()
            row = conn.execute(select(*_COLUMNS).where(_U.c.id == user_id)).one()
            record(conn, provider_actor(who.provider), "user.create", Target("user", address),
                   after={"email": address, "role": role}, at_us=now_us)
        conn.execute(_I.insert().values(provider=who.provider, subject=who.subject,
                                        user_id=row.id, created_us=now_us))
    if row.disabled_us is not None:
        return Refused("this account is disabled in Sounding; ask an administrator")
    before_projects = project_roles.named(conn, row.id)
    wanted = project_roles.project_ids(conn, who.projects)
    if project_roles.of_user(conn, row.id) != wanted:
        project_roles.replace(conn, row.id, wanted)
    after_projects = project_roles.named(conn, row.id)
    if row.role != role or before_projects != after_projects:
        if row.role != role:
            conn.execute(update(_U).where(_U.c.id == row.id).values(role=role))
        before: dict[str, object] = {"role": row.role}
        after: dict[str, object] = {"role": role}
        if before_projects or after_projects:
            before["projects"], after["projects"] = before_projects, after_projects
        record(conn, provider_actor(who.provider), "user.role", Target("user", row.email),
               before=before, after=after, at_us=now_us)
    return User(int(row.id), row.email, role, row.created_us, None)
