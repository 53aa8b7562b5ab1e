"""The schema. Times are integers: nanoseconds for spans, microseconds for events,
epoch seconds for rollup buckets; the same on SQLite and PostgreSQL, cheap to
compare and index. Alembic migrations in storage/migrations must match this file
(tests/storage/test_migrations.py checks).

The columns of the tables the writer fills are declared in storage/rows.py, once,
in their order, and built here: the writer and the wire form use the same
declaration, with no second list to keep in step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    text,
)
from sqlalchemy.types import TypeEngine

from storage import rows

_TYPES: dict[str, Callable[[int | None], TypeEngine[Any]]] = {
    rows.INT32: lambda _: Integer(),
    rows.INT64: lambda _: BigInteger(),
    rows.FLOAT: lambda _: Float(),
    rows.TEXT: lambda length: Text() if length is None else String(length),
    rows.JSON: lambda _: JSON(),
    rows.BYTES: lambda length: LargeBinary(length),
}


def _column(field: rows.Field, **options: Any) -> Column[Any]:
    return Column(field.name, _TYPES[field.kind](field.length),
                  nullable=field.nullable, **options)


def _columns(form: rows.RowForm, primary_key: tuple[str, ...] = (),
             **options: dict[str, Any]) -> list[Column[Any]]:
    """The form's columns in its order; `options` by column name."""
    return [_column(f, primary_key=f.name in primary_key, **options.get(f.name, {}))
            for f in form.columns]


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

# Resources, once per project (storage/rows.py says more).
resources = Table(
    rows.RESOURCES.table,
    metadata,
    *_columns(rows.RESOURCES, primary_key=("id",), id={"autoincrement": False}),
)


def _by_day(column: str, primary_key: tuple[str, ...]) -> dict[str, Any]:
    """On PostgreSQL, a table partitioned by UTC day on `column` (storage/partitions.py,
    migration 0013), whose primary key is `primary_key`: a partitioned table's unique
    keys must hold the partition column. SQLAlchemy declares one primary key for every
    engine, so the columns' primary_key flags say SQLite's, and `info` PostgreSQL's
    (Alembic's compare reads neither; tests/storage/test_partitions.py checks both).
    SQLite keeps one plain table."""
    return {"postgresql_partition_by": f"RANGE ({column})",
            "info": {"postgresql_primary_key": primary_key}}


# One narrow row per span (storage/rows.py). A rowid table: rows append, and only
# the two indexes are written at random places.
spans = Table(
    rows.SPANS.table,
    metadata,
    *_columns(rows.SPANS, primary_key=("project_id", "trace_id", "span_id")),
    Index("ix_spans_project_start", "project_id", "start_ns"),
    **_by_day("start_ns", ("project_id", "trace_id", "span_id", "start_ns")),
)

# One narrow row per log record (storage/rows.py, storage/logbody.py), keyed by a
# hash of the record so that a retried request adds no row.
logs = Table(
    rows.LOGS.table,
    metadata,
    *_columns(rows.LOGS, primary_key=("project_id", "record_key")),
    Index("ix_logs_project_time", "project_id", "time_ns"),
    Index("ix_logs_project_trace", "project_id", "trace_id"),
    Index("ix_logs_project_service_time", "project_id", "service_name", "time_ns"),
    **_by_day("time_ns", ("project_id", "record_key", "time_ns")),
)

# What a person can set an error group to (storage/groups.py), and what its lists
# filter on (storage/queries/errors.py, the dashboard): declared here, beside the
# column that holds it, and imported everywhere else.
GROUP_STATUSES = ("open", "resolved", "ignored")

error_groups = Table(
    rows.ERROR_GROUPS,
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, nullable=False),
    _column(rows.FINGERPRINT),
    Column("exception_class", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("first_seen_us", BigInteger, nullable=False),
    Column("last_seen_us", BigInteger, nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),  # one of GROUP_STATUSES
    Column("resolved_us", BigInteger, nullable=True),
    Column("reopen_count", Integer, nullable=False),
    Column("last_reopened_us", BigInteger, nullable=True),
    # Resolved in the next release: the release current then (storage/writer_groups.py
    # reopens only on an error of a release the group had not seen by then).
    Column("resolved_release", Text, nullable=True),
    # Ignored, snoozed: open again at this time, at this count, or when an hour counts
    # more than this many (storage/writer_snooze.py); NULL: no such condition.
    Column("snooze_until_us", BigInteger, nullable=True),
    Column("snooze_count", BigInteger, nullable=True),
    Column("snooze_per_hour", BigInteger, nullable=True),
    # Merged into that group (storage/merge.py; reads add this one's counts to it).
    Column("merged_into", Integer, nullable=True),
    UniqueConstraint("project_id", "fingerprint", name="uq_error_groups_project_fingerprint"),
    Index("ix_error_groups_project_last_seen", "project_id", "last_seen_us"),
    Index("ix_error_groups_project_merged_into", "project_id", "merged_into"),
)

error_group_hourly = Table(
    rows.ERROR_GROUP_HOURLY,
    metadata,
    Column("project_id", Integer, primary_key=True),
    _column(rows.FINGERPRINT, primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # epoch seconds of the hour's start
    Column("count", BigInteger, nullable=False),
    # The retention sweep's: a project's oldest hours. Written only when a group's
    # hour is new (an upsert adding to `count` leaves it as it is).
    Index("ix_error_group_hourly_project_hour", "project_id", "hour"),
)

# Per group, the count and first/last seen of each value of each facet of its stored
# errors (storage/rows.py, storage/writer_facets.py). The index answers "which groups
# have environment=X" for the error list's filters and dropdowns.
FACET_KEY = rows.FACET_KEY.column_names
error_group_facets = Table(
    rows.ERROR_GROUP_FACETS,
    metadata,
    *_columns(rows.FACET_KEY, primary_key=FACET_KEY),
    Column("count", BigInteger, nullable=False),
    Column("first_seen_us", BigInteger, nullable=False),
    Column("last_seen_us", BigInteger, nullable=False),
    Index("ix_error_group_facets_project_facet_value", "project_id", "facet", "value"),
)

error_status_changes = Table(
    rows.ERROR_STATUS_CHANGES,
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, nullable=False),
    _column(rows.FINGERPRINT),
    Column("from_status", String(16), nullable=False),
    Column("to_status", String(16), nullable=False),
    Column("reason", String(32), nullable=False),  # recurrence, user
    Column("at_us", BigInteger, nullable=False),
    # Who made a change by hand (dashboard/base.py's actor()); NULL: the collector.
    Column("actor", String(200), nullable=True),
    Column("detail", String(200), nullable=True),  # a merge's groups: "#12, #14"
    Index("ix_error_status_changes_group", "project_id", "fingerprint", "at_us"),
)

error_events = Table(
    rows.ERROR_EVENTS.table,
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    *_columns(rows.ERROR_EVENTS),
    Index("ix_error_events_group_ts", "project_id", "fingerprint", "ts_us"),
    Index("ix_error_events_trace", "project_id", "trace_id"),
    # The retention sweep's (storage/retention.py): the oldest occurrences of a project.
    Index("ix_error_events_project_ts", "project_id", "ts_us"),
)
# One stored copy per occurrence key (migration 0007): the writer's insert of a keyed
# error does nothing when a copy is stored, on any collector. Partial, so that the
# errors without a key (most of them) cost this index nothing, and are never merged.
_KEYED = error_events.c.occurrence_key.isnot(None)
Index("uq_error_events_occurrence", error_events.c.project_id,
      error_events.c.occurrence_key, unique=True, sqlite_where=_KEYED,
      postgresql_where=_KEYED)

deploys = Table(
    rows.DEPLOYS.table,
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *_columns(rows.DEPLOYS),
    Index("ix_deploys_project_ts", "project_id", "ts_us"),
)

# Request metrics, rolled up per minute and per (service, env, method, route): the
# key (storage/rows.py) is both tables' primary key.
ROLLUP_KEY = rows.ROLLUP_KEY.column_names


def _rollup_key_columns() -> list[Column[Any]]:
    return _columns(rows.ROLLUP_KEY, primary_key=ROLLUP_KEY)


request_rollups = Table(
    rows.REQUEST_ROLLUPS,
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
    rows.REQUEST_LATENCY,
    metadata,
    *_rollup_key_columns(),
    Column("bucket", Integer, primary_key=True),
    Column("count", BigInteger, nullable=False),
    # The primary key leads with the service and route: a range of minutes of every
    # route would read the whole table without this (migration 0014).
    Index("ix_request_latency_project_minute", "project_id", "minute"),
)

# The same rollups fed by HTTP server duration metrics (storage/writer_metrics.py),
# apart from those of requests and spans: per service, the performance queries take
# one source or the other, never both (storage/queries/performance.py).
metric_request_rollups = Table(
    rows.METRIC_REQUEST_ROLLUPS,
    metadata,
    *_rollup_key_columns(),
    Column("count", BigInteger, nullable=False),
    Column("error_count", BigInteger, nullable=False),
    Column("duration_sum_ms", Float, nullable=False),
    Index("ix_metric_request_rollups_project_minute", "project_id", "minute"),
)

metric_request_latency = Table(
    rows.METRIC_REQUEST_LATENCY,
    metadata,
    *_rollup_key_columns(),
    Column("bucket", Integer, primary_key=True),
    Column("count", BigInteger, nullable=False),
    Index("ix_metric_request_latency_project_minute", "project_id", "minute"),
)

# The four tables above per hour, with coarse latency buckets (sounding/histogram.py:
# five fine buckets each, quantiles within 5%): a week is 168 rows per route instead
# of 10,080, for the performance page's long ranges (storage/queries/performance.py).
# Written in the same transaction as the per-minute rows (storage/writer_hourly.py).
HOURLY_KEY = rows.HOURLY_KEY.column_names


def _hourly_tables(rollups: str, latency: str) -> tuple[Table, Table]:
    return (
        Table(rollups, metadata,
              *_columns(rows.HOURLY_KEY, primary_key=HOURLY_KEY),
              Column("count", BigInteger, nullable=False),
              Column("error_count", BigInteger, nullable=False),
              Column("duration_sum_ms", Float, nullable=False),
              Index(f"ix_{rollups}_project_hour", "project_id", "hour")),
        Table(latency, metadata,
              *_columns(rows.HOURLY_KEY, primary_key=HOURLY_KEY),
              Column("bucket", Integer, primary_key=True),  # a coarse bucket
              Column("count", BigInteger, nullable=False),
              Index(f"ix_{latency}_project_hour", "project_id", "hour")),
    )


request_rollups_hourly, request_latency_hourly = _hourly_tables(
    rows.REQUEST_ROLLUPS_HOURLY, rows.REQUEST_LATENCY_HOURLY)
metric_request_rollups_hourly, metric_request_latency_hourly = _hourly_tables(
    rows.METRIC_REQUEST_ROLLUPS_HOURLY, rows.METRIC_REQUEST_LATENCY_HOURLY)

# Metric series, once per project (storage/rows.py says what each column holds).
metric_series = Table(
    rows.METRIC_SERIES.table,
    metadata,
    *_columns(rows.METRIC_SERIES, primary_key=("project_id", "series_key")),
    Index("ix_metric_series_project_name", "project_id", "name"),
)

# Metric points: cumulative monotonic sums and histograms are stored as deltas
# (storage/writer_metrics.py); a re-sent point is stored once (the primary key).
metric_points = Table(
    rows.METRIC_POINTS.table,
    metadata,
    *_columns(rows.METRIC_POINTS, primary_key=("project_id", "series_key", "time_ns")),
    Index("ix_metric_points_project_time", "project_id", "time_ns"),
    **_by_day("time_ns", ("project_id", "series_key", "time_ns")),
)

# The last cumulative point of each series converted to deltas, so that a restarted
# collector, or another one behind the same load balancer, goes on from it.
# `time_ns` is -1 in a row made only to be locked (no point seen yet). `state` is
# the cumulative values as JSON: {"value"} for a sum, {"count", "sum", "buckets"} for
# a histogram.
metric_cumulative = Table(
    rows.METRIC_CUMULATIVE,
    metadata,
    Column("project_id", Integer, primary_key=True),
    Column("series_key", LargeBinary(16), primary_key=True),
    Column("start_ns", BigInteger, nullable=False),
    Column("time_ns", BigInteger, nullable=False),
    Column("state", Text, nullable=False),
)

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
    Index("ix_dashboard_sessions_expires", "expires_us"),
    Index("ix_dashboard_sessions_user", "user_id"),
)

# Team accounts (migration 0016, storage/users.py): an Argon2id password hash, never
# the password; `role` is viewer, member or admin; a disabled account cannot log in.
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

# Personal API tokens (storage/users.py): the SHA-256 of the token, never the token.
user_tokens = Table(
    "user_tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("name", String(200), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("revoked_us", BigInteger, nullable=True),
    Index("ix_user_tokens_user", "user_id"),
)

# Failed logins, one row each, by what was tried (`email:<address>` or
# `client:<ip>`), so that the throttle holds across collectors sharing the database
# (storage/login_throttle.py); rows older than the window are deleted as new come.
login_failures = Table(
    "login_failures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("subject", String(400), nullable=False),
    Column("at_us", BigInteger, nullable=False),
    Index("ix_login_failures_subject_at", "subject", "at_us"),
    Index("ix_login_failures_at", "at_us"),
)

# Alert destinations and rules made on a project's dashboard page (migration 0011,
# storage/alert_settings.py); those of the configuration file are not stored. A
# destination's `config` holds no credential: its URL (a Slack URL is one), webhook
# secret and SMTP password are in `sealed`, AES-GCM under `alerts.secrets_key`
# (sounding/extensions/alerts/secretbox.py).
alert_destinations = Table(
    "alert_destinations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("type", String(16), nullable=False),
    Column("config", JSON, nullable=False),
    Column("sealed", LargeBinary, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    UniqueConstraint("project_id", "name", name="uq_alert_destinations_project_name"),
)

alert_rules = Table(
    "alert_rules",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("rule", JSON, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Index("ix_alert_rules_project", "project_id"),
)

# Records an exporter acknowledged and still has to send on (migration 0005): the
# forwarding exporter's durable queue (storage/outbox.py). `queue` is the exporter's
# name, so that two forwarding exporters on one store keep their rows apart. The id
# is a 64-bit counter on PostgreSQL (rows come and go for ever) and SQLite's rowid.
outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True,
           autoincrement=True),
    Column("queue", String(64), nullable=False),
    Column("signal", String(16), nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("content_type", String(64), nullable=False),
    Column("content_encoding", String(16), nullable=False),
    Column("records", Integer, nullable=False),
    Column("size", Integer, nullable=False),
    Column("enqueued_us", BigInteger, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_us", BigInteger, nullable=False),
    Index("ix_outbox_queue_signal_id", "queue", "signal", "id"),
    # Ids never reused on SQLite either: the sender pages through rows by id.
    sqlite_autoincrement=True,
)

# Alerts (migration 0010, storage/alerts.py): a durable outbox of what happened and
# of what is to be sent where. A fact is written in the transaction of the change
# that causes it (the writer's new groups and reopenings: storage/writer_alerts.py;
# the evaluators' verdicts), once per (project, dedupe key) across every collector.
# `routed_us` stays NULL until the router has made the fact's deliveries: the partial
# index keeps finding those few cheap however many facts are kept.
ALERT_KINDS = ("new_group", "regression", "deploy_worse", "frequency", "error_rate",
               "latency", "test")
alert_facts = Table(
    rows.ALERT_FACTS,
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True,
           autoincrement=True),
    Column("project_id", Integer, nullable=False),
    Column("kind", String(32), nullable=False),  # one of ALERT_KINDS
    Column("subject", Text, nullable=False),  # the fingerprint, deploy id or service
    Column("dedupe_key", String(rows.DEDUPE_KEY_LENGTH), nullable=False),
    Column("at_us", BigInteger, nullable=False),  # when it happened
    Column("details", JSON, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("routed_us", BigInteger, nullable=True),
    UniqueConstraint("project_id", "dedupe_key", name="uq_alert_facts_project_dedupe_key"),
    Index("ix_alert_facts_project_id", "project_id", "id"),
    Index("ix_alert_facts_unrouted", "id", sqlite_where=text("routed_us IS NULL"),
          postgresql_where=text("routed_us IS NULL")),
    sqlite_autoincrement=True,
)

# One message to one destination: a fact's, or a digest's (fact_id NULL, the facts
# it names in `details`) that the deliveries `folded` into it point to by digest_id.
# A sender claims a pending one by setting `claimed_until_us` (a lease: a sender that
# dies lets it expire, so each is sent at least once). `last_error` names what went
# wrong, never a URL or a secret.
DELIVERY_STATUSES = ("pending", "sent", "failed", "folded")
alert_deliveries = Table(
    "alert_deliveries",
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True,
           autoincrement=True),
    Column("fact_id", BigInteger, nullable=True),
    Column("project_id", Integer, nullable=False),
    Column("destination", Text, nullable=False),  # the destination's name
    Column("status", String(16), nullable=False),  # one of DELIVERY_STATUSES
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_us", BigInteger, nullable=False),
    Column("claimed_until_us", BigInteger, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_us", BigInteger, nullable=False),
    Column("sent_us", BigInteger, nullable=True),
    Column("digest_id", BigInteger, nullable=True),
    Column("details", JSON, nullable=True),
    Index("ix_alert_deliveries_status_next", "status", "next_attempt_us"),
    Index("ix_alert_deliveries_destination_sent", "destination", "sent_us"),
    Index("ix_alert_deliveries_fact", "fact_id"),
    sqlite_autoincrement=True,
)

# Per (project, rule, subject), whether a threshold rule (error_rate, latency) is
# firing, so that it alerts once when crossed and once when recovered.
alert_state = Table(
    "alert_state",
    metadata,
    Column("project_id", Integer, primary_key=True),
    Column("rule_key", String(64), primary_key=True),
    Column("subject", Text, primary_key=True),
    Column("state", String(16), nullable=False),  # firing, ok
    Column("since_us", BigInteger, nullable=False),
)

# Leases on maintenance work that one collector of a database does at a time (the
# retention sweep, storage/retention.py): taken by an atomic UPDATE where the lease
# has expired or is already the holder's (migration 0012).
maintenance_leases = Table(
    "maintenance_leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(200), nullable=False),
    Column("expires_us", BigInteger, nullable=False),
)
