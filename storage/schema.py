"""The schema. Times are integers: nanoseconds for spans, microseconds for events,
epoch seconds for rollup buckets; the same on SQLite and PostgreSQL, cheap to
compare and index. Alembic migrations in storage/migrations must match this file
(tests/storage/test_migrations.py checks)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

projects = Table(
    "projects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("created_us", BigInteger, nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    # SHA-256 of the key, hex. Keys are random, so a fast hash is enough; the key
    # itself is never stored.
    Column("key_hash", String(64), nullable=False, unique=True),
    # First 12 hex characters of the hash: shown by `keys list`, taken by `keys revoke`.
    Column("key_id", String(12), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("revoked_us", BigInteger, nullable=True),
)

# A resource (service.name and the rest) is shared by every span of a process:
# stored once per project, keyed by a hash (storage/spanbody.py).
resources = Table(
    "resources",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("project_id", Integer, nullable=False),
    Column("attributes", JSON, nullable=False),
)

# One narrow row per span: ids as bytes, the searched fields as columns, and the
# rest (attributes, events, links) in `body`, an OTLP Span message
# (storage/spanbody.py). A rowid table: rows append, and only the two indexes are
# written at random places.
spans = Table(
    "spans",
    metadata,
    Column("project_id", Integer, primary_key=True),
    Column("trace_id", LargeBinary(16), primary_key=True),
    Column("span_id", LargeBinary(8), primary_key=True),
    Column("parent_span_id", LargeBinary(8), nullable=False),  # empty for a root span
    Column("name", Text, nullable=False),
    Column("kind", Integer, nullable=False),
    Column("start_ns", BigInteger, nullable=False),
    Column("end_ns", BigInteger, nullable=False),
    Column("status_code", Integer, nullable=False),
    Column("status_message", Text, nullable=False),
    Column("service_name", Text, nullable=False),
    Column("scope_name", Text, nullable=False),
    Column("category", String(16), nullable=False),
    Column("resource_id", BigInteger, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Index("ix_spans_project_start", "project_id", "start_ns"),
)

# What a person can set an error group to (storage/groups.py), and what its lists
# filter on (storage/queries/errors.py, the dashboard): declared here, beside the
# column that holds it, and imported everywhere else.
GROUP_STATUSES = ("open", "resolved", "ignored")

error_groups = Table(
    "error_groups",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, nullable=False),
    Column("fingerprint", String(255), nullable=False),
    Column("exception_class", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("first_seen_us", BigInteger, nullable=False),
    Column("last_seen_us", BigInteger, nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),  # one of GROUP_STATUSES
    Column("resolved_us", BigInteger, nullable=True),
    Column("reopen_count", Integer, nullable=False),
    Column("last_reopened_us", BigInteger, nullable=True),
    UniqueConstraint("project_id", "fingerprint", name="uq_error_groups_project_fingerprint"),
    Index("ix_error_groups_project_last_seen", "project_id", "last_seen_us"),
)

error_group_hourly = Table(
    "error_group_hourly",
    metadata,
    Column("project_id", Integer, primary_key=True),
    Column("fingerprint", String(255), primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # epoch seconds of the hour's start
    Column("count", BigInteger, nullable=False),
)

error_status_changes = Table(
    "error_status_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, nullable=False),
    Column("fingerprint", String(255), nullable=False),
    Column("from_status", String(16), nullable=False),
    Column("to_status", String(16), nullable=False),
    Column("reason", String(32), nullable=False),  # recurrence, user
    Column("at_us", BigInteger, nullable=False),
    Index("ix_error_status_changes_group", "project_id", "fingerprint", "at_us"),
)

error_events = Table(
    "error_events",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    Column("project_id", Integer, nullable=False),
    Column("fingerprint", String(255), nullable=False),
    Column("ts_us", BigInteger, nullable=False),
    Column("received_us", BigInteger, nullable=False),
    Column("exception_class", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("backtrace", JSON, nullable=False),
    Column("params", JSON, nullable=True),
    Column("source_context", JSON, nullable=True),
    Column("request_id", Text, nullable=True),
    Column("user_id", Text, nullable=True),
    Column("trace_id", String(32), nullable=True),
    Column("span_id", String(16), nullable=True),
    Index("ix_error_events_group_ts", "project_id", "fingerprint", "ts_us"),
    Index("ix_error_events_trace", "project_id", "trace_id"),
)

deploys = Table(
    "deploys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, nullable=False),
    Column("git_sha", String(128), nullable=False),
    Column("version", Text, nullable=True),
    Column("env", String(200), nullable=True),
    Column("deployer", Text, nullable=True),
    Column("description", Text, nullable=True),
    Column("ts_us", BigInteger, nullable=False),
    Column("received_us", BigInteger, nullable=False),
    Index("ix_deploys_project_ts", "project_id", "ts_us"),
)

# Request metrics, rolled up per minute and per (service, env, method, route).
_ROLLUP_KEY = ("project_id", "service", "env", "method", "route", "minute")


def _rollup_key_columns() -> list[Column]:
    return [
        Column("project_id", Integer, primary_key=True),
        Column("service", String(200), primary_key=True),
        Column("env", String(200), primary_key=True),
        Column("method", String(16), primary_key=True),
        Column("route", String(500), primary_key=True),
        Column("minute", BigInteger, primary_key=True),  # epoch seconds of the minute's start
    ]


request_rollups = Table(
    "request_rollups",
    metadata,
    *_rollup_key_columns(),
    Column("count", BigInteger, nullable=False),
    Column("error_count", BigInteger, nullable=False),
    Column("duration_sum_ms", Float, nullable=False),
    Index("ix_request_rollups_project_minute", "project_id", "minute"),
)

# The latency histogram of each rollup row: one row per non-empty bucket
# (sounding/histogram.py), so that merging is an atomic `count = count + n`.
request_latency = Table(
    "request_latency",
    metadata,
    *_rollup_key_columns(),
    Column("bucket", Integer, primary_key=True),
    Column("count", BigInteger, nullable=False),
)

ROLLUP_KEY = _ROLLUP_KEY

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
    Index("ix_dashboard_sessions_expires", "expires_us"),
)
