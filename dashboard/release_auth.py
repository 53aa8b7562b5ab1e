"""Who may upload source maps and manage releases of a project, through the
Sentry-compatible API (dashboard/release_api.py): ONE function, so that the token
kind it accepts can change in one place.

Today a personal API token (storage/accounts/users.py) of an enabled account with at
least the member role (the role that may change what a project holds, as on every
other writing route); a viewer's token is refused for every project (403). Scoped
tokens (issue 28: `releases` scope, limited to projects) replace this check here.
"""

from __future__ import annotations

from storage.accounts import users
from storage.queries import projects as pq
from storage.store import Store

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
        raise Unauthorized("send 'Authorization: Bearer <token>' (SENTRY_AUTH_TOKEN): a "
                           "personal API token of a member or admin")
    user = users.token_user(store, bearer)
    if user is None:
        raise Unauthorized("the token is not a valid personal API token (revoked, or of a "
                           "disabled account?)")
    if user.role not in UPLOAD_ROLES:
        raise Forbidden(f"the token of {user.email} ({user.role}) may not upload to "
                        f"{'project ' + repr(project) if project else 'any project'}: "
                        "uploads need the member role")
    if project is None:
        return None
    found = next((p for p in pq.list_projects(store) if p.name == project), None)
    if found is None:
        raise UnknownProject(f"there is no project named {project!r} (SENTRY_PROJECT is "
                             "a Sounding project's name)")
    return found.id
