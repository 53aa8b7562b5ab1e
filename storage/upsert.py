"""Dialect-aware upserts: one helper for SQLite and PostgreSQL `ON CONFLICT`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Table, func
from sqlalchemy.dialects import postgresql, sqlite


def insert(dialect: str, table: Table) -> Any:
    """An INSERT that supports `on_conflict_do_nothing/update` on this dialect."""
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def greatest(dialect: str, a: Any, b: Any) -> ColumnElement[Any]:
    # SQLite's two-argument max() is scalar; PostgreSQL spells it GREATEST.
    return func.greatest(a, b) if dialect == "postgresql" else func.max(a, b)


def least(dialect: str, a: Any, b: Any) -> ColumnElement[Any]:
    return func.least(a, b) if dialect == "postgresql" else func.min(a, b)
