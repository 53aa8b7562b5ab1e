"""The one `metadata` every table of the schema is declared on, and the helpers that
build a table's columns from its declaration in storage/rows.py.

The columns of the tables the writer fills are declared in storage/rows.py, once,
in their order, and built here: the writer and the wire form use the same
declaration, with no second list to keep in step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Float, Integer, LargeBinary, MetaData, String, Text
from sqlalchemy.types import TypeEngine

from storage import rows

metadata = MetaData()

_TYPES: dict[str, Callable[[int | None], TypeEngine[Any]]] = {
    rows.INT32: lambda _: Integer(),
    rows.INT64: lambda _: BigInteger(),
    rows.FLOAT: lambda _: Float(),
    rows.TEXT: lambda length: Text() if length is None else String(length),
    rows.JSON: lambda _: JSON(),
    rows.BYTES: lambda length: LargeBinary(length),
}


def column(field: rows.Field, **options: Any) -> Column[Any]:
    return Column(field.name, _TYPES[field.kind](field.length),
                  nullable=field.nullable, **options)


def form_columns(form: rows.RowForm, primary_key: tuple[str, ...] = (),
                 **options: dict[str, Any]) -> list[Column[Any]]:
    """The form's columns in its order; `options` by column name."""
    return [column(f, primary_key=f.name in primary_key, **options.get(f.name, {}))
            for f in form.columns]


def by_day(column: str, primary_key: tuple[str, ...]) -> dict[str, Any]:
    """On PostgreSQL, a table partitioned by UTC day on `column` (storage/partitions.py,
    migration 0013), whose primary key is `primary_key`: a partitioned table's unique
    keys must hold the partition column. SQLAlchemy declares one primary key for every
    engine, so the columns' primary_key flags say SQLite's, and `info` PostgreSQL's
    (Alembic's compare reads neither; tests/storage/test_partitions.py checks both).
    SQLite keeps one plain table."""
    return {"postgresql_partition_by": f"RANGE ({column})",
            "info": {"postgresql_primary_key": primary_key}}
