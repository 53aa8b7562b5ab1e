"""Databases already at the newest migration, for the tests that start collectors or
open stores: migrating a new database from nothing costs about 0.25 s of CPU on
SQLite and 0.4 s on PostgreSQL, and the suite makes some 600 of them. Each test
process migrates one template per database kind, once, the way a collector does
(`Store.upgrade`), and every test then gets its own copy: a file copy on SQLite, a
`CREATE DATABASE ... TEMPLATE` on PostgreSQL (0.09 s).

The tests of the migrations themselves (tests/storage/test_migrations.py and the
like) take the `empty_*` fixtures of tests/conftest.py: databases with nothing in
them, as a first start sees them. A copy is a database at the newest revision and
nothing else, so a collector started on one still makes its projects, keys and
first-run admin token itself.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path

import psycopg

from storage.store import Store

_lock = threading.Lock()
_sqlite_template: Path | None = None
_pg_template: str | None = None
PG_PREFIX = "sounding_template_"


def _migrate(url: str) -> None:
    store = Store(url)
    try:
        store.upgrade()
    finally:
        # Every connection closed: SQLite's last close copies the write-ahead log
        # back into the file, so the file alone is the whole database.
        store.writer.dispose()
        store.reader.dispose()


def migrated_sqlite(path: Path) -> str:
    """A SQLite database at `path` at the newest migration; returns its URL."""
    global _sqlite_template
    with _lock:
        if _sqlite_template is None:
            folder = Path(tempfile.mkdtemp(prefix="sounding-template-"))
            atexit.register(shutil.rmtree, folder, True)
            template = folder / "template.db"
            _migrate(f"sqlite:///{template}")
            _sqlite_template = template
    shutil.copyfile(_sqlite_template, path)
    return f"sqlite:///{path}"


def pg_template(admin_dsn: str) -> str:
    """The name of this process's PostgreSQL template database, made at first use and
    dropped at exit. Templates left by a test process that was killed are dropped
    here too (their pid is gone)."""
    global _pg_template
    with _lock:
        if _pg_template is not None:
            return _pg_template
        name = f"{PG_PREFIX}{os.getpid()}"
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            for (old,) in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                       (PG_PREFIX + "%",)).fetchall():
                if not _alive(old.removeprefix(PG_PREFIX)):
                    conn.execute(f'DROP DATABASE IF EXISTS "{old}" WITH (FORCE)')
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        base = admin_dsn.rsplit("/", 1)[0].split("://", 1)[1]
        _migrate(f"postgresql+psycopg://{base}/{name}")
        atexit.register(_drop, admin_dsn, name)
        _pg_template = name
        return name


def _alive(pid: str) -> bool:
    if not pid.isdigit():
        return True  # not one of ours: leave it
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _drop(admin_dsn: str, name: str) -> None:
    try:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except psycopg.Error:
        pass  # the next test process drops it (its pid is gone)
