"""Limits per project (model/limits.py): the limits set on the dashboard or through
the API, the buckets and quota counts shared by every collector of the database, the
usage counted per hour, and spike protection's settings and state."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
)

from storage.schema.columns import metadata

# A project's limit for one category, set on its Limits page or through the API
# (storage/limits/settings.py); it overrides the configuration's for that category.
project_limits = Table(
    "project_limits",
    metadata,
    Column("project_id", Integer, ForeignKey("projects.id"), primary_key=True),
    Column("category", String(16), primary_key=True),
    Column("rate", Float, nullable=False),
    Column("burst", Float, nullable=False),
    Column("quota", BigInteger, nullable=False),
    Column("period", String(8), nullable=False),
    Column("updated_us", BigInteger, nullable=False),
)

# The shared token bucket and quota count of each (project, category), lent out in
# slices by storage/limits/leases.py. No foreign key: it is written on the hot path,
# and a project's rows are only counters.
limit_buckets = Table(
    "limit_buckets",
    metadata,
    Column("project_id", Integer, primary_key=True, autoincrement=False),
    Column("category", String(16), primary_key=True),
    Column("tokens", Float, nullable=False),
    Column("last_s", Float, nullable=False),  # epoch seconds the tokens were counted at
    Column("period", BigInteger, nullable=False),  # the quota's day or month, first second
    Column("used", BigInteger, nullable=False),  # of the quota, in that period
)

# Usage per project, hour, category and outcome (storage/limits/usage.py): records and
# requests, added to by every collector's flush. `reason` tells apart what one outcome
# holds (a client report's discard reason); '' when nothing does.
usage_hourly = Table(
    "usage_hourly",
    metadata,
    Column("project_id", Integer, primary_key=True, autoincrement=False),
    Column("hour", BigInteger, primary_key=True),  # epoch seconds
    Column("category", String(16), primary_key=True),
    Column("outcome", String(24), primary_key=True),
    Column("reason", String(64), primary_key=True),
    Column("records", BigInteger, nullable=False),
    Column("requests", BigInteger, nullable=False),
    Index("ix_usage_hourly_hour", "hour"),
)

# Spike protection per project (extensions/limits.py): on when `multiple` > 0; a
# category whose last minutes exceed `multiple` times its baseline is capped at that
# until it falls back. `active` is the last state decided, so that an alert fact is
# raised once when protection starts and once when it stops, by one collector.
spike_protection = Table(
    "spike_protection",
    metadata,
    Column("project_id", Integer, ForeignKey("projects.id"), primary_key=True),
    Column("multiple", Float, nullable=False),
    Column("active", Boolean, nullable=False),
    Column("cap", Float, nullable=False),  # records a second while active
    Column("category", String(16), nullable=False),  # the category capped while active
    Column("changed_us", BigInteger, nullable=False),
)
