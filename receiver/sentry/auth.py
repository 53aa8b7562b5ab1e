"""Which project a Sentry SDK's request is for, and whether its key may send there.

SDKs carry the DSN's public key in one of three places: the `X-Sentry-Auth` header
(`Sentry sentry_key=<key>, sentry_version=7, ...`; some send the same value in
`Authorization`), the `sentry_key` query parameter (browser SDKs, whose requests
must stay free of custom headers to avoid a CORS preflight), or the envelope
header's `dsn`. The key is looked up by the authenticator extension, as every other
door's; the project id in the URL must be that key's project. The key never appears
in a message: the answers below are sent to the client and may be logged.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from model.component import MAX_KEY_LENGTH, Authenticator
from model.errors import Forbidden, Unauthenticated

MISSING = ("no Sentry key: send 'X-Sentry-Auth: Sentry sentry_key=<key>', the sentry_key "
           "query parameter, or the DSN in the envelope header")


def key_from_auth_header(value: str | None) -> str | None:
    """The sentry_key of an `X-Sentry-Auth` (or `Authorization: Sentry ...`) value;
    None when the header is absent or is another scheme (`Bearer`)."""
    if not value:
        return None
    scheme, _, params = value.strip().partition(" ")
    if scheme.lower() != "sentry":
        return None
    for param in params.split(","):
        name, _, key = param.strip().partition("=")
        if name.strip() == "sentry_key":
            return key.strip()
    raise Unauthenticated("the Sentry auth header has no sentry_key; send "
                          "'X-Sentry-Auth: Sentry sentry_key=<key>, sentry_version=7'")


def key_from_dsn(dsn: Any) -> str | None:
    """The public key of a DSN string (`http://<key>@host/<project id>`)."""
    if not isinstance(dsn, str) or len(dsn) > 4 * MAX_KEY_LENGTH:
        return None
    try:
        return urlsplit(dsn).username or None
    except ValueError:
        return None


def request_key(x_sentry_auth: str | None, authorization: str | None,
                query_key: str | None) -> str | None:
    """The key the request's headers or query carry, first found wins; None when
    there is none (an envelope may still carry its DSN)."""
    return (key_from_auth_header(x_sentry_auth) or key_from_auth_header(authorization)
            or query_key or None)


async def project_for_sentry(auth: Authenticator, key: str | None, project_id: int) -> int:
    """`project_id` once `key` is known to be one of its keys. 401 for a missing or
    unknown key, 403 for another project's key: the statuses Sentry's SDKs log as
    an authentication problem."""
    if not key:
        raise Unauthenticated(MISSING)
    if len(key) > MAX_KEY_LENGTH:
        raise Unauthenticated("unknown or revoked Sentry key")
    try:
        owner = await auth.project_for_key(key)
    except Unauthenticated as exc:
        raise Unauthenticated("unknown or revoked Sentry key") from exc
    if owner != project_id:
        raise Forbidden(f"this key does not belong to project {project_id}; use the DSN "
                        "shown for the project you send to")
    return project_id
