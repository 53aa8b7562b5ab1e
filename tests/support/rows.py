"""Rows of any table of storage/schema/ with every required column filled, for
tests that care about a few columns only (the retention sweep's time columns)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from storage.schema import metadata


def filler(column: sa.Column[Any], n: int) -> Any:
    """A value for a required column: distinct per `n` where it could be a key."""
    kind = column.type
    if isinstance(kind, sa.Integer | sa.BigInteger):
        return n
    if isinstance(kind, sa.Float):
        return 1.0
    if isinstance(kind, sa.LargeBinary):
        return n.to_bytes(kind.length or 8, "big")
    if isinstance(kind, sa.JSON):
        return {}
    return f"v{n}"


def row(table: str, n: int, **values: Any) -> dict[str, Any]:
    """Every required column but a generated id, then `values`."""
    filled = {c.name: filler(c, n) for c in metadata.tables[table].columns
              if not c.nullable and c.name != "id"}
    filled.update(values)
    return filled


def insert(conn: Any, table: str, rows: list[dict[str, Any]]) -> None:
    conn.execute(metadata.tables[table].insert(), rows)
