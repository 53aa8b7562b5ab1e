"""The DBAPI parameter marks of the writer's hand-built SQL: `?` for SQLite's
sqlite3, `%s` for PostgreSQL's psycopg. One owner, so that no writer module spells
the choice again. (Statements built with SQLAlchemy bind their own parameters.)"""

from __future__ import annotations


def mark(dialect: str) -> str:
    """One parameter's mark."""
    return "%s" if dialect == "postgresql" else "?"


def marks(dialect: str, n: int) -> str:
    """`n` marks, comma-separated: a row's VALUES list without its parentheses."""
    return ", ".join([mark(dialect)] * n)
