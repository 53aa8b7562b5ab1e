"""`Authorization: Bearer <key>` picks the project: the header is protocol, parsed
here; the key is looked up by the authenticator extension (extensions/
auth.py), which receivers ask instead of the store."""

from __future__ import annotations

from model.component import MAX_KEY_LENGTH, Authenticator
from model.errors import Unauthenticated


def bearer_key(header: str | None) -> str:
    if not header:
        raise Unauthenticated("missing Authorization header; send 'Authorization: Bearer <key>'")
    scheme, _, key = header.strip().partition(" ")
    key = key.strip()
    if (scheme.lower() != "bearer" or not key or " " in key
            or len(key) > MAX_KEY_LENGTH):
        raise Unauthenticated("malformed Authorization header; send 'Authorization: Bearer <key>'")
    return key


async def project_for(auth: Authenticator, header: str | None) -> int:
    return await auth.project_for_key(bearer_key(header))
