"""Who may upload source maps and manage releases of a project, through the
Sentry-compatible API (dashboard/release_api.py): ONE function, so that the token
kind it accepts can change in one place.

An API token (storage/accounts/tokens.py) with the `releases` scope (or `admin`) that
reaches the project (`Token.allows`, the one rule of a token's reach); a personal
token also needs its account to have at least the member role in that project
(storage/accounts/roles.py `role_in`), the role that may change what a project holds
on every other writing route.
"""

from __future__ import annotations

from model.timeutil import now_us
from storage.accounts import project_roles, tokens
from storage.accounts.roles import highest, role_in
from storage.queries import projects as pq
from storage.store import Store

SCOPE = "releases"
UPLOAD_ROLES = ("member", "admin")


class Unauthorized(Exception):
    """No token, or one Sounding does not know (401)."""


class Forbidden(Exception):
    """A known token that may not upload to this project (403)."""


class UnknownProject(Exception):
    """No project of that name (404)."""


def authorize_release_upload(store: Store, bearer: str | None, org: str,
                             project: str | None) -> int | None:
    """The id of `project` when `bearer` may upload to it and manage its releases
    (`project` None: whether it may upload to any, as chunk-upload asks before it
    names a project; returns None then). `org` is Sentry's organization slug, which
    Sounding, having none, accepts whatever it is."""
    del org  # one organization: whatever SENTRY_ORG says
    if not bearer:
        raise Unauthorized("send 'Authorization: Bearer <token>' (SENTRY_AUTH_TOKEN): an "
                           "API token with the releases scope")
    token = tokens.authenticate(store, bearer, now_us())
    if token is None:
        raise Unauthorized("the token is not a working API token (revoked, expired, or of "
                           "a disabled account?)")
    if not token.has_scope(SCOPE):
        raise Forbidden(f"the token {token.name!r} has no releases scope (it has "
                        f"{', '.join(sorted(token.scopes))})")
    in_projects: dict[int, str] = {}
    if token.user_id is not None:
        with store.reader.connect() as conn:
            in_projects = project_roles.of_user(conn, token.user_id)
        if highest([token.role or "none", *in_projects.values()]) not in UPLOAD_ROLES:
            raise Forbidden(f"the token of {token.email} ({token.role}) may not upload: "
                            "uploads need the member role")
    if project is None:
        return None
    found = next((p for p in pq.list_projects(store) if p.name == project), None)
    if found is None or not token.allows(SCOPE, found.id):
        # A project out of the token's reach is refused without saying whether it exists.
        raise (Forbidden(f"the token {token.name!r} may not upload to project {project!r}")
               if found is not None else
               UnknownProject(f"there is no project named {project!r} (SENTRY_PROJECT is "
                              "a Sounding project's name)"))
    if token.user_id is not None and role_in(token.role or "none", in_projects,
                                             found.id) not in UPLOAD_ROLES:
        raise Forbidden(f"the token of {token.email} may not upload to project {project!r}: "
                        "uploads need the member role in it")
    return found.id
