"""The audit log (migration 0023, storage/audit/): one row per change of state made
by a person, a token, the command line or Sounding itself. Rows are only ever
inserted (an UPDATE is refused by a trigger the migration makes) and deleted by the
retention sweep alone (storage/retention/sweep.py), past `retention.audit_log`."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Column, Index, Integer, String, Table

from storage.schema.columns import metadata

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at_us", BigInteger, nullable=False),
    # Who: user | token | system | cli (storage/audit/log.py, Actor), the id of that
    # user or token (none for some), and the name shown for it then (an email, a
    # token's name), kept as it was: the account may be renamed or deleted later.
    Column("actor_kind", String(16), nullable=False),
    Column("actor_id", String(64), nullable=True),
    Column("actor_name", String(320), nullable=False),
    # What: one word of storage/audit/actions.py's ACTIONS, e.g. `group.resolve`.
    Column("action", String(64), nullable=False),
    # To what: the kind of thing changed, its id, and its project (none for an account).
    Column("target_kind", String(32), nullable=False),
    Column("target_id", String(200), nullable=True),
    Column("project_id", Integer, nullable=True),
    # Before and after, where it matters; never a secret (storage/audit/log.py redacts).
    Column("before", JSON, nullable=True),
    Column("after", JSON, nullable=True),
    Index("ix_audit_log_at", "at_us"),
    Index("ix_audit_log_project_at", "project_id", "at_us"),
    Index("ix_audit_log_action_at", "action", "at_us"),
    Index("ix_audit_log_actor_at", "actor_name", "at_us"),
)
