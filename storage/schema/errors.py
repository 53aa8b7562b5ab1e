"""Error groups and what is kept about them: hourly counts, facets, status changes and
the stored occurrences."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table, Text, UniqueConstraint

from storage import rows
from storage.schema.columns import column, form_columns, metadata

# What a person can set an error group to (storage/groups/status.py), and what its lists
# filter on (storage/queries/errors.py, the dashboard): declared here, beside the
# column that holds it, and imported everywhere else.
GROUP_STATUSES = ("open", "resolved", "ignored")
ISSUE_TYPES = rows.ISSUE_TYPES

error_groups = Table(
    rows.ERROR_GROUPS,
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, nullable=False),
    column(rows.FINGERPRINT),
    Column("exception_class", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("first_seen_us", BigInteger, nullable=False),
    Column("last_seen_us", BigInteger, nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),  # one of GROUP_STATUSES
    Column("resolved_us", BigInteger, nullable=True),
    Column("reopen_count", Integer, nullable=False),
    Column("last_reopened_us", BigInteger, nullable=True),
    # Resolved in the next release: the release current then (storage/writer/groups.py
    # reopens only on an error of a release the group had not seen by then).
    Column("resolved_release", Text, nullable=True),
    # Ignored, snoozed: open again at this time, at this count, or when an hour counts
    # more than this many (storage/writer/snooze.py); NULL: no such condition.
    Column("snooze_until_us", BigInteger, nullable=True),
    Column("snooze_count", BigInteger, nullable=True),
    Column("snooze_per_hour", BigInteger, nullable=True),
    # Merged into that group (storage/groups/merge.py; reads add this one's counts to it).
    Column("merged_into", Integer, nullable=True),
    # One of ISSUE_TYPES (migration 0032), set when the writer inserts the group.
    Column("issue_type", String(16), nullable=False, server_default="error"),
    UniqueConstraint("project_id", "fingerprint", name="uq_error_groups_project_fingerprint"),
    Index("ix_error_groups_project_last_seen", "project_id", "last_seen_us"),
    Index("ix_error_groups_project_merged_into", "project_id", "merged_into"),
)

error_group_hourly = Table(
    rows.ERROR_GROUP_HOURLY,
    metadata,
    Column("project_id", Integer, primary_key=True),
    column(rows.FINGERPRINT, primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # epoch seconds of the hour's start
    Column("count", BigInteger, nullable=False),
    # The retention sweep's: a project's oldest hours. Written only when a group's
    # hour is new (an upsert adding to `count` leaves it as it is).
    Index("ix_error_group_hourly_project_hour", "project_id", "hour"),
)

# Per group, the count and first/last seen of each value of each facet of its stored
# errors (storage/rows.py, storage/writer/facets.py). The index answers "which groups
# have environment=X" for the error list's filters and dropdowns.
FACET_KEY = rows.FACET_KEY.column_names
error_group_facets = Table(
    rows.ERROR_GROUP_FACETS,
    metadata,
    *form_columns(rows.FACET_KEY, primary_key=FACET_KEY),
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
    column(rows.FINGERPRINT),
    Column("from_status", String(16), nullable=False),
    Column("to_status", String(16), nullable=False),
    Column("reason", String(32), nullable=False),  # recurrence, user
    Column("at_us", BigInteger, nullable=False),
    # Who made a change by hand (dashboard/access.py's actor()); NULL: the collector.
    Column("actor", String(200), nullable=True),
    Column("detail", String(200), nullable=True),  # a merge's groups: "#12, #14"
    Index("ix_error_status_changes_group", "project_id", "fingerprint", "at_us"),
)

error_events = Table(
    rows.ERROR_EVENTS.table,
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
           autoincrement=True),
    *form_columns(rows.ERROR_EVENTS),
    Index("ix_error_events_group_ts", "project_id", "fingerprint", "ts_us"),
    Index("ix_error_events_trace", "project_id", "trace_id"),
    # The retention sweep's (storage/retention/sweep.py): the oldest occurrences of a project.
    Index("ix_error_events_project_ts", "project_id", "ts_us"),
)
# One stored copy per occurrence key (migration 0007): the writer's insert of a keyed
# error does nothing when a copy is stored, on any collector. Partial, so that the
# errors without a key (most of them) cost this index nothing, and are never merged.
_KEYED = error_events.c.occurrence_key.isnot(None)
Index("uq_error_events_occurrence", error_events.c.project_id,
      error_events.c.occurrence_key, unique=True, sqlite_where=_KEYED,
      postgresql_where=_KEYED)
