"""Release health: sessions per release, environment and minute, their users per
hour, and the marks that make each session update and bucket count once
(storage/writer/sessions.py, docs/release-health.md)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, LargeBinary, Table

from storage import rows
from storage.schema.columns import form_columns, metadata

SESSION_KEY = rows.SESSION_KEY.column_names

# Sessions by the minute they started in: how many started, and how many of them
# ended each way (exited, errored, crashed, abnormal: one each). Added to by atomic
# upserts, so several collectors may write it.
session_rollups = Table(
    rows.SESSION_ROLLUPS,
    metadata,
    *form_columns(rows.SESSION_KEY, primary_key=SESSION_KEY),
    *(Column(name, BigInteger, nullable=False) for name in rows.SESSION_OUTCOMES),
    Index("ix_session_rollups_project_minute", "project_id", "minute"),
)

# Each distinct user (a hash of the SDK's `did`) per release, environment and hour
# their sessions started in, with whether any of them errored or crashed (0 or 1,
# raised by the upsert, never lowered): distinct users over whole hours are exact.
session_users = Table(
    rows.SESSION_USERS,
    metadata,
    *form_columns(rows.SESSION_KEY, primary_key=SESSION_KEY)[:-1],
    Column("hour", BigInteger, primary_key=True),
    Column("user_key", LargeBinary(16), primary_key=True),
    Column("errored", Integer, nullable=False),
    Column("crashed", Integer, nullable=False),
    Index("ix_session_users_project_hour", "project_id", "hour"),
)

# The marks of the session counts added (model.records.SessionCount): one insert
# that does nothing for a mark already here is what keeps an update from counting
# twice, across retries and collectors. Kept as long as the rollups (retention).
session_marks = Table(
    rows.SESSION_MARKS,
    metadata,
    Column("project_id", Integer, primary_key=True),
    Column("mark", LargeBinary(16), primary_key=True),
    Column("received_us", BigInteger, nullable=False),
    Index("ix_session_marks_project_received", "project_id", "received_us"),
)
