"""The first start on a database with nothing in it: the collector migrates it to the
newest revision before it answers, then stores what it acknowledges. (Most tests
start on a copy of an already migrated database, tests/support/templates.py.)"""

from __future__ import annotations

from collections.abc import Callable

from storage.store import head_revision
from tests.support.server import Server


def test_a_collector_on_an_empty_database_migrates_it_then_stores(
        start: Callable[..., Server], empty_db_url: str) -> None:
    server = start(empty_db_url)
    assert server.query("SELECT version_num FROM alembic_version") == [(head_revision(),)]
    body = {"exception_class": "KeyError", "message": "first", "backtrace": ["a.py:1 in f"],
            "fingerprint": "first-start"}
    assert server.post("/ingest/errors", body).status_code == 202
    assert server.query("SELECT count(*) FROM error_events") == [(1,)]
    assert "First run" in server.log()
