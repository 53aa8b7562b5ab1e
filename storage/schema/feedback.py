"""User feedback (Sentry's `feedback` and `user_report` items), one row each."""

from __future__ import annotations

from sqlalchemy import Column, Index, Integer, Table, UniqueConstraint

from storage import rows
from storage.schema.columns import form_columns, metadata

feedback = Table(
    rows.FEEDBACK.table,
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *form_columns(rows.FEEDBACK),
    UniqueConstraint("project_id", "feedback_id", name="uq_feedback_project_feedback_id"),
    # A group's feedback: by the events it names (storage/queries/feedback.py).
    Index("ix_feedback_project_event", "project_id", "associated_event_id"),
    Index("ix_feedback_project_ts", "project_id", "ts_us"),
)
