"""Writing the audit log: `record`, the one call every audited change makes, in the
transaction of the change itself, so that a change is never stored without its
record nor a record without its change (both commit or neither does).

Who acts is an `Actor`: a team account (`user`), a token (`token`: the admin token,
an API token), the command line (`cli`: the operating-system user and host that ran
`sounding ...`) or Sounding itself (`system`: e.g. an identity provider re-mapping a
role at login). Each has an id (where there is one) and the name shown for it, kept
as it was then. What it did is one word of storage/audit/actions.py; to what, a
`Target`: a kind, an id and the project (none for an account).

The before and after are JSON objects, and never carry a secret: whatever the caller
passes, a value under a key that names a credential (SECRET_KEYS, at any depth) is
replaced by "[redacted]" before it is written. Rows are never updated (a trigger of
migration 0023 refuses it) and deleted only by the retention sweep.
"""

from __future__ import annotations

import getpass
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from model.timeutil import now_us
from storage import schema
from storage.audit.actions import ACTIONS

ACTOR_KINDS = ("user", "token", "system", "cli")
REDACTED = "[redacted]"
# Keys whose values are credentials, wherever they appear in a before or an after
# (compared lower-cased). A destination's URL is one: a Slack URL's path is its secret.
SECRET_KEYS = frozenset({
    "password", "password_hash", "secret", "client_secret", "secrets_key", "token",
    "token_hash", "key", "key_hash", "api_key", "url", "dsn", "sealed", "cookie_secret",
    "authorization", "private_key"})
_ACTOR_ID, _ACTOR_NAME, _TARGET_ID = 64, 320, 200  # the columns' lengths


@dataclass(frozen=True, slots=True)
class Actor:
    """Who made a change: `kind` one of ACTOR_KINDS, its `id` (a user's or token's
    id; None where there is none) and its `name` as shown (an email, a token's name)."""

    kind: str
    id: str | None
    name: str

    def __post_init__(self) -> None:
        if self.kind not in ACTOR_KINDS:
            raise ValueError(f"an actor's kind is one of {', '.join(ACTOR_KINDS)}, "
                             f"not {self.kind!r}")

    @classmethod
    def user(cls, user_id: int, email: str) -> Actor:
        return cls("user", str(user_id), email)

    @classmethod
    def token(cls, token_id: int | str, name: str) -> Actor:
        """An API token (the tokens of issue 28), or the admin token (ADMIN_TOKEN)."""
        return cls("token", str(token_id), name)

    @classmethod
    def system(cls, name: str, system_id: str | None = None) -> Actor:
        return cls("system", system_id, name)

    @classmethod
    def cli(cls) -> Actor:
        """Whoever runs this `sounding` command: the operating system's user name
        (its id) at this host."""
        try:
            user = getpass.getuser()
        except (OSError, KeyError):  # no USER/LOGNAME and no passwd entry (a container)
            user = "unknown"
        return cls("cli", user, f"{user}@{socket.gethostname()}")


# The holder of the admin token (dashboard.admin_token or the generated one).
ADMIN_TOKEN = Actor("token", "admin", "admin token")
# A change made by Sounding with no one behind it.
SYSTEM = Actor("system", None, "sounding")


@dataclass(frozen=True, slots=True)
class Target:
    """What a change was made to: its kind (`group`, `user`, `destination`...), its id
    (a group's or rule's id, an email...) and the project it belongs to."""

    kind: str
    id: str | int | None = None
    project_id: int | None = None


def redacted(value: Any) -> Any:
    """`value` with every credential replaced (see SECRET_KEYS); a copy."""
    if isinstance(value, Mapping):
        return {str(k): (REDACTED if str(k).lower() in SECRET_KEYS and v is not None
                         else redacted(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value


def record(conn: Connection, actor: Actor, action: str, target: Target, *,
           before: Mapping[str, Any] | None = None, after: Mapping[str, Any] | None = None,
           at_us: int | None = None) -> None:
    """Record one change in the audit log, in `conn`'s transaction: the caller's own,
    that makes the change. `action` is a word of ACTIONS (ValueError otherwise: a
    programming error, raised before anything is written)."""
    if action not in ACTIONS:
        raise ValueError(f"{action!r} is not an audit action (storage/audit/actions.py)")
    conn.execute(schema.audit_log.insert(), {
        "at_us": now_us() if at_us is None else at_us,
        "actor_kind": actor.kind,
        "actor_id": None if actor.id is None else actor.id[:_ACTOR_ID],
        "actor_name": actor.name[:_ACTOR_NAME],
        "action": action,
        "target_kind": target.kind,
        "target_id": None if target.id is None else str(target.id)[:_TARGET_ID],
        "project_id": target.project_id,
        "before": None if before is None else redacted(before),
        "after": None if after is None else redacted(after),
    })
