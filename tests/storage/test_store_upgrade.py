"""Store.upgrade leaves a database already at the newest migration without importing
Alembic (a sidecar keeps what it imports for its whole life), and migrates one that
is not, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text

from storage.store import Store, head_revision
from tests.support.migrations import alembic_config, migrate

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from storage.store import Store
store = Store(sys.argv[1])
print(store.at_head())
store.upgrade()
print("alembic" in sys.modules, "mako" in sys.modules)
store.dispose()
"""


def _probe(url: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, url], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.split()


def test_the_head_read_from_the_files_is_alembics() -> None:
    config = alembic_config()
    assert [head_revision()] == ScriptDirectory.from_config(config).get_heads()


def test_a_database_at_head_is_left_without_importing_alembic(store: Store) -> None:
    assert store.at_head()
    assert _probe(store.url) == ["True", "False", "False"]


def test_a_database_behind_is_migrated_with_alembic(empty_db_url: str) -> None:
    assert _probe(empty_db_url) == ["False", "True", "True"]  # new: Alembic creates it all
    assert _probe(empty_db_url) == ["True", "False", "False"]
    store = Store(empty_db_url)
    try:
        migrate(store, command.downgrade, "-1")  # one migration back, as Alembic does
        assert not store.at_head()
    finally:
        store.dispose()
    assert _probe(empty_db_url) == ["False", "True", "True"]
    store = Store(empty_db_url)
    try:
        assert store.at_head()
        with store.reader.connect() as connection:
            stamped = connection.execute(text("SELECT version_num FROM alembic_version"))
            assert [row[0] for row in stamped] == [head_revision()]
    finally:
        store.dispose()
