"""The audit log's writer (storage/audit/log.py) on SQLite and PostgreSQL: one row per
call, in the caller's transaction (a change rolled back leaves no record), no secret
in a before or an after at any depth, only words of the vocabulary, and rows that no
UPDATE can change (the trigger of migration 0023). Which code may touch the table at
all is checked on the sources: writing in storage/audit/log.py, reading in
storage/queries/audit.py, deleting in the retention sweep, nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from storage import schema
from storage.audit.actions import ACTIONS, FAMILIES, family
from storage.audit.log import ADMIN_TOKEN, REDACTED, Actor, Target, record
from storage.queries import audit as aq
from storage.store import Store

REPO = Path(__file__).resolve().parents[3]
PACKAGES = ("sounding", "dashboard", "receiver", "processors", "exporters", "extensions",
            "storage", "runtime", "model")
_A = schema.audit_log


def rows(store: Store) -> list[sa.Row]:  # type: ignore[type-arg]
    with store.reader.connect() as conn:
        return list(conn.execute(sa.select(_A).order_by(_A.c.id)))


def test_one_row_per_record_with_who_what_and_target(store: Store) -> None:
    with store.writer.begin() as conn:
        record(conn, Actor.user(7, "ada@example.com"), "group.resolve",
               Target("group", 12, 3), before={"status": "open"},
               after={"status": "resolved", "next_release": True}, at_us=1_000)
    (row,) = rows(store)
    assert (row.at_us, row.actor_kind, row.actor_id, row.actor_name, row.action,
            row.target_kind, row.target_id, row.project_id, row.before, row.after) == (
        1_000, "user", "7", "ada@example.com", "group.resolve", "group", "12", 3,
        {"status": "open"}, {"status": "resolved", "next_release": True})


def test_a_change_rolled_back_leaves_no_record(store: Store) -> None:
    with pytest.raises(RuntimeError), store.writer.begin() as conn:
        record(conn, ADMIN_TOKEN, "user.delete", Target("user", "bo@example.com"))
        raise RuntimeError("the change failed after its record was written")
    assert rows(store) == []


def test_no_secret_is_stored_at_any_depth(store: Store) -> None:
    after = {"name": "hook", "type": "webhook",
             "config": {"url": "https://hooks.example/SECRETPATH", "Secret": "whsec-1",
                        "headers": [{"Authorization": "Bearer abc"}], "port": 25},
             "password": "hunter2hunter2", "token": None}
    with store.writer.begin() as conn:
        record(conn, ADMIN_TOKEN, "destination.create", Target("destination", 1, 1),
               after=after)
    (row,) = rows(store)
    assert row.after == {"name": "hook", "type": "webhook",
                         "config": {"url": REDACTED, "Secret": REDACTED,
                                    "headers": [{"Authorization": REDACTED}], "port": 25},
                         "password": REDACTED, "token": None}
    for secret in ("SECRETPATH", "whsec-1", "Bearer abc", "hunter2"):
        assert secret not in str(row.after)
    assert after["password"] == "hunter2hunter2"  # the caller's object is left as it was


def test_only_words_of_the_vocabulary_and_known_actor_kinds(store: Store) -> None:
    with pytest.raises(ValueError, match="not an audit action"), \
            store.writer.begin() as conn:
        record(conn, ADMIN_TOKEN, "group.delete", Target("group", 1, 1))
    with pytest.raises(ValueError, match="user, token, system, cli"):
        Actor("robot", None, "r2")
    assert rows(store) == []
    assert all(re.fullmatch(r"[a-z_]+\.[a-z_]+", a) and text for a, text in ACTIONS.items())
    assert set(FAMILIES) == {family(a) for a in ACTIONS}


def test_a_record_cannot_be_updated(store: Store) -> None:
    with store.writer.begin() as conn:
        record(conn, Actor.cli(), "key.revoke", Target("key", "abc123", 1))
    for change in ({"actor_name": "someone else"}, {"after": {"forged": True}}):
        with pytest.raises(DBAPIError, match="append-only"), store.writer.begin() as conn:
            conn.execute(sa.update(_A).values(**change))
    (row,) = rows(store)
    assert row.actor_kind == "cli" and row.after is None


def test_reads_filter_by_actor_action_family_and_project_newest_first(store: Store) -> None:
    ada, bo = Actor.user(1, "ada@example.com"), Actor.user(2, "bo@example.com")
    with store.writer.begin() as conn:
        for i, (who, action, project) in enumerate([
                (ada, "group.resolve", 1), (bo, "group.merge", 1), (ada, "user.role", None),
                (bo, "group.reopen", 2), (ada, "group.ignore", 2)]):
            record(conn, who, action, Target("x", i, project), at_us=100 + i)
    def ids(match: aq.Filter, limit: int = 10, offset: int = 0) -> list[str | None]:
        return [e.target_id for e in aq.entries(store, match, limit, offset).entries]
    assert ids(aq.Filter()) == ["4", "3", "2", "1", "0"]
    assert ids(aq.Filter(actor="ada@example.com")) == ["4", "2", "0"]
    assert ids(aq.Filter(action="group")) == ["4", "3", "1", "0"]
    assert ids(aq.Filter(action="group.merge")) == ["1"]
    assert ids(aq.Filter(project_id=2)) == ["4", "3"]
    assert ids(aq.Filter(actor="bo@example.com", action="group", project_id=1)) == ["1"]
    assert ids(aq.Filter(action="gro")) == []  # a family is a whole word
    first = aq.entries(store, aq.Filter(), 2)
    assert first.more and not aq.entries(store, aq.Filter(), 2, 4).more
    assert ids(aq.Filter(), 2, 2) == ["2", "1"]


def _python_sources() -> list[Path]:
    return [p for package in PACKAGES for p in (REPO / package).rglob("*.py")
            if "migrations" not in p.parts]


def test_the_table_is_written_read_and_deleted_in_one_place_each() -> None:
    """Append-only in the code too: no module but the writer inserts, no module but the
    reads selects, and no module but the retention sweep deletes."""
    mentions = {str(p.relative_to(REPO)) for p in _python_sources()
                if re.search(r"\baudit_log\b", p.read_text())}
    assert mentions == {"storage/schema/audit.py", "storage/schema/__init__.py",
                        "storage/audit/log.py", "storage/queries/audit.py",
                        "storage/retention/sweep.py", "extensions/retention/config.py",
                        "extensions/retention/extension.py"}
    writer = (REPO / "storage/audit/log.py").read_text()
    assert "insert()" in writer and not re.search(r"\b(update|delete)\(", writer)
    reads = (REPO / "storage/queries/audit.py").read_text()
    assert not re.search(r"\b(insert|update|delete)\(", reads)
    sweep = (REPO / "storage/retention/sweep.py").read_text()
    assert sweep.count("DELETE FROM audit_log") == 1
    assert "UPDATE audit_log" not in sweep
