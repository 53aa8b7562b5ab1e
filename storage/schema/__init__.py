"""The schema. Times are integers: nanoseconds for spans, microseconds for events,
epoch seconds for rollup buckets; the same on SQLite and PostgreSQL, cheap to
compare and index. Alembic migrations in storage/migrations must match this package
(tests/storage/test_migrations.py checks).

One `metadata` (columns.py, with the helpers that build columns from storage/rows.py)
holds every table; each module declares the tables of one concept:

- projects.py: projects, API keys, resources
- signals.py: spans, logs, deploys, metric series, points and cumulative state
- errors.py: error groups, their hourly counts, facets, status changes, occurrences
- rollups.py: request rollups and latency, per minute and per hour; operation and
  edge rollups and peer aliases (the service map)
- accounts.py: dashboard secrets, sessions, users, tokens, failed logins
- alerts.py: alert destinations, rules, facts, deliveries, threshold state
- audit.py: the audit log
- queues.py: the forwarding outbox, maintenance leases
- sessions.py: release health (sessions per minute, their users, their marks)
- feedback.py: user feedback
- artifacts.py: releases, uploaded source map chunks, bundles and files
- crons.py: cron monitors, their check-ins and incidents
- limits.py: limits per project, the shared buckets, usage per hour, spike protection

Everything is imported here: `from storage import schema` then `schema.<table>` is
how the rest of storage reads it, and importing this package declares every table, so
that a foreign key by name always finds its table."""

from storage.schema.accounts import (
    api_token_projects,
    api_tokens,
    dashboard_secrets,
    dashboard_sessions,
    login_failures,
    user_identities,
    user_project_roles,
    users,
)
from storage.schema.alerts import (
    ALERT_KINDS,
    DELIVERY_STATUSES,
    alert_deliveries,
    alert_destinations,
    alert_facts,
    alert_rules,
    alert_state,
)
from storage.schema.artifacts import (
    artifact_bundles,
    artifact_chunks,
    artifact_files,
    releases,
)
from storage.schema.audit import audit_log
from storage.schema.columns import metadata
from storage.schema.crons import cron_checkins, cron_incidents, cron_monitors
from storage.schema.errors import (
    FACET_KEY,
    GROUP_STATUSES,
    ISSUE_TYPES,
    error_events,
    error_group_facets,
    error_group_hourly,
    error_groups,
    error_status_changes,
)
from storage.schema.feedback import feedback
from storage.schema.limits import limit_buckets, project_limits, spike_protection, usage_hourly
from storage.schema.projects import api_keys, project_policies, projects, resources
from storage.schema.queues import maintenance_leases, outbox
from storage.schema.rollups import (
    HOURLY_KEY,
    ROLLUP_KEY,
    edge_rollups,
    edge_rollups_hourly,
    metric_request_rollups,
    metric_request_rollups_hourly,
    operation_rollups,
    operation_rollups_hourly,
    peer_aliases,
    request_latency,
    request_latency_hourly,
    request_rollups,
    request_rollups_hourly,
)
from storage.schema.sessions import SESSION_KEY, session_marks, session_rollups, session_users
from storage.schema.signals import (
    deploys,
    logs,
    metric_cumulative,
    metric_exemplars,
    metric_points,
    metric_series,
    spans,
)

__all__ = [
    "ALERT_KINDS", "DELIVERY_STATUSES", "FACET_KEY", "GROUP_STATUSES", "HOURLY_KEY", "ISSUE_TYPES",
    "ROLLUP_KEY", "SESSION_KEY", "feedback", "session_marks", "session_rollups",
    "session_users", "alert_deliveries", "alert_destinations", "alert_facts", "alert_rules",
    "alert_state", "api_keys", "api_token_projects", "api_tokens", "artifact_bundles",
    "artifact_chunks", "artifact_files", "audit_log", "cron_checkins", "cron_incidents",
    "cron_monitors",
    "dashboard_secrets", "dashboard_sessions", "deploys",
    "edge_rollups", "edge_rollups_hourly", "error_events", "error_group_facets",
    "error_group_hourly", "error_groups",
    "error_status_changes", "limit_buckets", "login_failures", "logs", "maintenance_leases",
    "metadata",
    "metric_cumulative", "metric_exemplars", "metric_points", "metric_request_rollups",
    "metric_request_rollups_hourly", "metric_series", "operation_rollups",
    "operation_rollups_hourly", "outbox", "peer_aliases", "project_limits", "project_policies",
    "projects",
    "releases", "request_latency", "request_latency_hourly", "request_rollups",
    "request_rollups_hourly", "resources", "spans", "spike_protection", "usage_hourly",
    "user_identities", "user_project_roles", "users",
]
