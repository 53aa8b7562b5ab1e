"""Migration 0023 on SQLite and PostgreSQL: the audit log's table with its trigger
refusing UPDATE (a DELETE, the retention sweep's, goes through), and back down to
0021 with nothing of it left (no table, trigger or function), then up again."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from storage.store import Store
from tests.support.migrations import migrate

ROW = {"at_us": 1, "actor_kind": "cli", "actor_name": "ops@host", "action": "key.revoke",
       "target_kind": "key"}


def test_the_audit_log_migration_goes_both_ways(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0023")
    audit = sa.table("audit_log", *(sa.column(c) for c in ROW))
    with store.writer.begin() as conn:
        conn.execute(audit.insert(), [ROW, {**ROW, "at_us": 2}])
    with pytest.raises(sa.exc.DBAPIError, match="append-only"), store.writer.begin() as conn:
        conn.execute(sa.text("UPDATE audit_log SET actor_name = 'someone else'"))
    with store.writer.begin() as conn:
        assert conn.execute(sa.text("DELETE FROM audit_log WHERE at_us = 1")).rowcount == 1
    migrate(store, command.downgrade, "0021")
    with store.writer.connect() as conn:
        assert "audit_log" not in sa.inspect(conn).get_table_names()
        if store.dialect == "postgresql":
            assert conn.execute(sa.text("SELECT count(*) FROM pg_proc WHERE proname = "
                                        "'audit_log_no_update'")).scalar() == 0
    migrate(store, command.upgrade, "head")
    with store.writer.begin() as conn:
        conn.execute(audit.insert(), [ROW])
        assert conn.execute(sa.text("SELECT count(*) FROM audit_log")).scalar() == 1
    store.dispose()
