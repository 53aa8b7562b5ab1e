"""The Alembic migrations produce exactly storage/schema.py, on both engines."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from storage.schema import metadata
from storage.store import Store


def _diff(url: str) -> list[object]:
    store = Store(url)
    store.upgrade()
    store.upgrade()  # a second run is a no-op
    with store.writer.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    store.dispose()
    return diff


def test_migrations_match_the_schema_on_sqlite(sqlite_url: str) -> None:
    assert _diff(sqlite_url) == []


def test_migrations_match_the_schema_on_postgres(pg_url: str) -> None:
    assert _diff(pg_url) == []
