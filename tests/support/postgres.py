"""A fresh PostgreSQL database per test on the machine's server (127.0.0.1:5432)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from tests.support import templates

ADMIN_DSN = os.environ.get("SOUNDING_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def reachable() -> str | None:
    try:
        with psycopg.connect(ADMIN_DSN, connect_timeout=3):
            return None
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0]


def require_postgres() -> None:
    problem = reachable()
    if problem is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL must be reachable on CI ({ADMIN_DSN}): {problem}")
    pytest.skip(f"no PostgreSQL server at {ADMIN_DSN}: {problem}")


@contextmanager
def fresh_database(migrated: bool = False) -> Iterator[str]:
    """Yield the URL of a new database, empty or (`migrated`) at the newest migration
    (tests/support/templates.py); drop it afterwards."""
    require_postgres()
    name = f"sounding_test_{uuid.uuid4().hex[:12]}"
    template = f' TEMPLATE "{templates.pg_template(ADMIN_DSN)}"' if migrated else ""
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{template}')
    base = ADMIN_DSN.rsplit("/", 1)[0]
    try:
        yield f"postgresql+psycopg://{base.split('://', 1)[1]}/{name}"
    finally:
        with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def wait_until_blocked(store: Any, thread: threading.Thread, timeout_s: float = 60.0) -> None:
    """Until some session of `store`'s database waits on a lock (the writer in
    `thread`, blocked by another's uncommitted insert). Each look is its own
    transaction: PostgreSQL shows pg_stat_activity as a snapshot taken at a
    transaction's first look, so polling inside one transaction never sees the wait
    begin (the race tests hung now and then on exactly that)."""
    deadline = time.monotonic() + timeout_s
    with store.reader.connect() as watch:
        while True:
            blocked = watch.execute(sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()")).scalar()
            watch.rollback()  # the next look takes a new snapshot
            if blocked:
                return
            thread.join(0.05)
            assert thread.is_alive(), "the writer finished without waiting on a lock"
            assert time.monotonic() < deadline, "no writer ever waited on a lock"

