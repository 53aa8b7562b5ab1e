"""Dialect-aware upserts for SQLAlchemy statements: SQLite and PostgreSQL `ON CONFLICT`.
The group-commit writer builds its SQL text itself (storage/writer/groups.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite


def insert(dialect: str, table: Table) -> Any:
    """An INSERT that supports `on_conflict_do_nothing/update` on this dialect."""
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)

