"""The schema. Times are integers: nanoseconds for spans, microseconds for events,
epoch seconds for rollup buckets; the same on SQLite and PostgreSQL, cheap to
compare and index. Alembic migrations in storage/migrations must match this package
(tests/storage/test_migrations.py checks).

One `metadata` (columns.py, with the helpers that build columns from storage/rows.py)
holds every table; each module declares the tables of one concept:

- projects.py: projects, API keys, resources
- signals.py: spans, logs, deploys, metric series, points and cumulative state
- errors.py: error groups, their hourly counts, facets, status changes, occurrences
- rollups.py: request rollups and latency, per minute and per hour
- accounts.py: dashboard secrets, sessions, users, tokens, failed logins
- alerts.py: alert destinations, rules, facts, deliveries, threshold state
- queues.py: the forwarding outbox, maintenance leases

Everything is imported here: `from storage import schema` then `schema.<table>` is
how the rest of storage reads it, and importing this package declares every table, so
that a foreign key by name always finds its table."""

from storage.schema.accounts import (
    dashboard_secrets,
    dashboard_sessions,
    login_failures,
    user_identities,
    user_tokens,
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
from storage.schema.columns import metadata
from storage.schema.errors import (
    FACET_KEY,
    GROUP_STATUSES,
    error_events,
    error_group_facets,
    error_group_hourly,
    error_groups,
    error_status_changes,
)
from storage.schema.projects import api_keys, project_policies, projects, resources
from storage.schema.queues import maintenance_leases, outbox
from storage.schema.rollups import (
    HOURLY_KEY,
    ROLLUP_KEY,
    metric_request_rollups,
    metric_request_rollups_hourly,
    request_latency,
    request_latency_hourly,
    request_rollups,
    request_rollups_hourly,
)
from storage.schema.signals import (
    deploys,
    logs,
    metric_cumulative,
    metric_points,
    metric_series,
    spans,
)

__all__ = [
    "ALERT_KINDS", "DELIVERY_STATUSES", "FACET_KEY", "GROUP_STATUSES", "HOURLY_KEY",
    "ROLLUP_KEY", "alert_deliveries", "alert_destinations", "alert_facts", "alert_rules",
    "alert_state", "api_keys", "dashboard_secrets", "dashboard_sessions", "deploys",
    "error_events", "error_group_facets", "error_group_hourly", "error_groups",
    "error_status_changes", "login_failures", "logs", "maintenance_leases", "metadata",
    "metric_cumulative", "metric_points", "metric_request_rollups",
    "metric_request_rollups_hourly", "metric_series", "outbox", "project_policies", "projects",
    "request_latency", "request_latency_hourly", "request_rollups",
    "request_rollups_hourly", "resources", "spans", "user_identities", "user_tokens", "users",
]
