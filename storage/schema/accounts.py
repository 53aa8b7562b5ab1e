"""Who may use the dashboard: the shared secrets, sessions, team accounts, their API
tokens and the failed logins that throttle guessing. Every secret is kept as a hash."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, ForeignKey, Index, Integer, String, Table

from storage.schema.columns import metadata

# Secrets every collector on one database shares (migration 0002): the SHA-256 of a
# generated dashboard admin token (never the token), and the key that signs session
# cookies, so that a session made on one collector is valid on all of them.
dashboard_secrets = Table(
    "dashboard_secrets",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(128), nullable=False),
    Column("created_us", BigInteger, nullable=False),
)

# Dashboard sessions (migration 0004), in the database so that every collector sharing
# it sees a logout at once. Only the SHA-256 of the session's random token is kept:
# whoever reads the table cannot log in with it.
dashboard_sessions = Table(
    "dashboard_sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("created_us", BigInteger, nullable=False),
    Column("expires_us", BigInteger, nullable=False),
    # The team account logged in (migration 0016); NULL for an admin-token login.
    Column("user_id", Integer, nullable=True),
    # The OpenID provider (dashboard.oidc.providers[].name) it logged in through
    # (migration 0020), whose end-session endpoint its logout visits; NULL otherwise.
    Column("provider", String(64), nullable=True),
    Index("ix_dashboard_sessions_expires", "expires_us"),
    Index("ix_dashboard_sessions_user", "user_id"),
)

# Team accounts (migration 0016, storage/accounts/users.py): an Argon2id password hash, never
# the password; `role` is none, viewer, member or admin (none: only the projects of
# `user_project_roles`); a disabled account cannot log in.
users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("email", String(320), nullable=False, unique=True),
    Column("password_hash", String(200), nullable=False),
    Column("role", String(16), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("disabled_us", BigInteger, nullable=True),
)

# API tokens (migration 0022, storage/accounts/tokens.py): personal (`user_id`, acting as
# that account) or service (`user_id` NULL); the SHA-256 of the token, never the token.
# `scopes` is the token's scopes, space-separated; `all_projects` false limits it to
# the projects of `api_token_projects`. `last_used_us` is written at most once a minute.
api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("name", String(200), nullable=False),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=True),
    Column("scopes", String(200), nullable=False),
    Column("all_projects", Boolean, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    # Who made it: an account's email, "admin token", or "cli".
    Column("created_by", String(320), nullable=False),
    Column("expires_us", BigInteger, nullable=True),
    Column("last_used_us", BigInteger, nullable=True),
    Column("revoked_us", BigInteger, nullable=True),
    Index("ix_api_tokens_user", "user_id"),
)

# The projects a token limited to some reaches (storage/accounts/tokens.py).
api_token_projects = Table(
    "api_token_projects",
    metadata,
    Column("token_id", Integer, ForeignKey("api_tokens.id"), primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id"), primary_key=True),
)

# Single sign-on identities (migration 0020, storage/accounts/identities.py): the
# account an OpenID provider's subject (`sub`, stable, unlike an email) logs in as.
user_identities = Table(
    "user_identities",
    metadata,
    Column("provider", String(64), primary_key=True),
    Column("subject", String(255), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Index("ix_user_identities_user", "user_id"),
)

# An account's roles in single projects (migration 0030, storage/accounts/project_roles.py),
# above its global `users.role`: its role in a project is the higher of the two. Set by
# an admin, or by the OpenID provider's claim at every login (replaced whole).
user_project_roles = Table(
    "user_project_roles",
    metadata,
    Column("user_id", Integer, ForeignKey("users.id"), primary_key=True),
    Column("project_id", Integer, ForeignKey("projects.id"), primary_key=True),
    Column("role", String(16), nullable=False),
)

# Failed logins, one row each, by what was tried (`email:<address>` or
# `client:<ip>`), so that the throttle holds across collectors sharing the database
# (storage/accounts/login_throttle.py); rows older than the window are deleted as new come.
login_failures = Table(
    "login_failures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("subject", String(400), nullable=False),
    Column("at_us", BigInteger, nullable=False),
    Index("ix_login_failures_subject_at", "subject", "at_us"),
    Index("ix_login_failures_at", "at_us"),
)
