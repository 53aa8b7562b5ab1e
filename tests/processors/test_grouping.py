"""Fingerprint grouping and status reopening, through the real server and store."""

from __future__ import annotations

import pytest

from storage.groups import status
from storage.store import Store
from tests.receiver.test_errors import error
from tests.support.server import Projects, Server


@pytest.fixture
def server(module_projects: Projects) -> Server:
    """The module's collector (SQLite, then PostgreSQL), as a project of this test's own
    sees it."""
    return module_projects.take()


def group(server: Server, fingerprint: str) -> object:
    (row,) = [r for r in server.project_rows("error_groups") if r.fingerprint == fingerprint]
    return row


def test_same_fingerprint_is_one_group_with_first_last_seen_and_count(server: Server) -> None:
    times = ["2026-11-21T10:05:00Z", "2026-11-21T09:59:00Z", "2026-11-21T11:30:00Z"]
    for i, ts in enumerate(times):
        body = error(fingerprint="fp-a", message=f"failure {i}", timestamp=ts)
        assert server.post("/ingest/errors", body).status_code == 202
    batch = {"errors": [error(fingerprint="fp-a", timestamp="2026-11-21T10:20:00Z"),
                        error(fingerprint="fp-b", timestamp="2026-11-21T10:00:00Z")]}
    assert server.post("/ingest/errors/batch", batch).status_code == 202
    a = group(server, "fp-a")
    assert a.count == 4
    assert a.first_seen_us == 1_795_255_140_000_000  # 09:59
    assert a.last_seen_us == 1_795_260_600_000_000  # 11:30
    assert a.message == "failure 2"  # the latest occurrence's message
    assert a.status == "open"
    assert group(server, "fp-b").count == 1
    hourly = [r for r in server.project_rows("error_group_hourly", order_by="hour")
              if r.fingerprint == "fp-a"]
    assert [(r.hour - 1_795_251_600, r.count) for r in hourly] == [(0, 1), (3600, 2), (7200, 1)]


def test_projects_do_not_share_groups(start: object) -> None:
    server = start(keys={"one": "key-one", "two": "key-two"})  # type: ignore[operator]
    server.post("/ingest/errors", error(fingerprint="same"), key="key-one")
    server.post("/ingest/errors", error(fingerprint="same"), key="key-two")
    server.post("/ingest/errors", error(fingerprint="same"), key="key-two")
    rows = server.query("SELECT p.name, g.count FROM error_groups g JOIN projects p "
                        "ON p.id = g.project_id ORDER BY p.name")
    assert [(r.name, r.count) for r in rows] == [("one", 1), ("two", 2)]


def test_resolved_group_reopens_on_a_later_occurrence(server: Server) -> None:
    server.post("/ingest/errors", error(fingerprint="fp", timestamp="2026-11-21T10:00:00Z"))
    store = Store(server.db_url)
    resolved_at = 1_795_255_200_000_000  # 2026-11-21T10:00:00Z; resolved 10 minutes later
    assert status.set_status(store, server.project_id(), "fp", "resolved",
                             at_us=resolved_at + 600_000_000) == "open"
    # An occurrence from before the resolution (a late report) does not reopen it.
    server.post("/ingest/errors", error(fingerprint="fp", timestamp="2026-11-21T10:05:00Z"))
    assert group(server, "fp").status == "resolved"
    server.post("/ingest/errors", error(fingerprint="fp", timestamp="2026-11-21T10:30:00Z"))
    row = group(server, "fp")
    assert (row.status, row.reopen_count, row.count) == ("open", 1, 3)
    assert row.last_reopened_us == 1_795_257_000_000_000
    history = server.project_rows("error_status_changes", "from_status, to_status, reason",
                                  order_by="id")
    assert [tuple(h) for h in history] == [("open", "resolved", "user"),
                                           ("resolved", "open", "recurrence")]
    store.dispose()


def test_ignored_group_keeps_counting_and_stays_ignored(server: Server) -> None:
    server.post("/ingest/errors", error(fingerprint="noise"))
    store = Store(server.db_url)
    status.set_status(store, server.project_id(), "noise", "ignored")
    server.post("/ingest/errors", error(fingerprint="noise"))
    row = group(server, "noise")
    assert (row.status, row.count) == ("ignored", 2)
    store.dispose()
