"""Cron monitors (migration 0027, docs/crons.md): the monitors, their check-ins
(one row per run, storage/rows.py's CHECK_INS) and their incidents.

A monitor is made and configured by its check-ins' `monitor_config` or on the
dashboard (storage/crons/monitors.py); its state (status, the next expected
check-in, the counts of failures and successes in a row, the open incident) is
written only by the cron checker (storage/crons/checker.py), under a lease.
An incident is unique per monitor and the check-in that opened it, and a missed
check-in's id is derived from its monitor and expected time: a second checker
that somehow ran the same turn would store neither twice.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    UniqueConstraint,
    text,
)

from storage import rows
from storage.schema.columns import form_columns, metadata

cron_monitors = Table(
    "cron_monitors",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("slug", String(64), nullable=False),
    # The configuration (model/cron.py's MonitorConfig); no schedule yet: NULL type.
    Column("schedule_type", String(16), nullable=True),
    Column("schedule", String(200), nullable=True),
    Column("unit", String(16), nullable=True),
    Column("checkin_margin", Integer, nullable=False),
    Column("max_runtime", Integer, nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("failure_threshold", Integer, nullable=False),
    Column("recovery_threshold", Integer, nullable=False),
    # The state, the checker's alone. status: model.cron.STATES, NULL before any.
    Column("status", String(16), nullable=True),
    Column("next_expected_us", BigInteger, nullable=True),
    Column("last_checkin_us", BigInteger, nullable=True),
    Column("failures", Integer, nullable=False),  # failed check-ins in a row
    Column("successes", Integer, nullable=False),  # ok check-ins in a row
    Column("incident_id", Integer, nullable=True),  # the open incident
    Column("created_us", BigInteger, nullable=False),
    Column("updated_us", BigInteger, nullable=False),
    UniqueConstraint("project_id", "slug", name="uq_cron_monitors_project_slug"),
    # The missed check-ins: monitors whose next check-in is due, found by range.
    Index("ix_cron_monitors_next_expected", "next_expected_us"),
)

cron_checkins = Table(
    rows.CHECK_INS.table,
    metadata,
    *form_columns(rows.CHECK_INS, primary_key=("project_id", "check_in_id")),
    # The checker's: 0 until it applied the row's latest status to its monitor.
    Column("processed", Integer, nullable=False, server_default=text("0")),
    # A missed check-in's expected time (its ts_us is the same; kept for the page).
    Column("expected_us", BigInteger, nullable=True),
    Index("ix_cron_checkins_monitor_ts", "project_id", "monitor_slug", "ts_us"),
    Index("ix_cron_checkins_project_ts", "project_id", "ts_us"),
    Index("ix_cron_checkins_unprocessed", "ts_us", sqlite_where=text("processed = 0"),
          postgresql_where=text("processed = 0")),
    Index("ix_cron_checkins_running", "ts_us", sqlite_where=text("status = 'in_progress'"),
          postgresql_where=text("status = 'in_progress'")),
)

cron_incidents = Table(
    "cron_incidents",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("monitor_id", Integer, ForeignKey("cron_monitors.id"), nullable=False),
    Column("reason", String(16), nullable=False),  # error, timeout or missed
    Column("opened_by", String(32), nullable=False),  # the check-in that opened it
    Column("opened_us", BigInteger, nullable=False),
    Column("resolved_us", BigInteger, nullable=True),
    UniqueConstraint("monitor_id", "opened_by", name="uq_cron_incidents_monitor_opened_by"),
    Index("ix_cron_incidents_monitor", "monitor_id", "opened_us"),
)
