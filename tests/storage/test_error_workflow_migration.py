"""Migration 0015 (storage/migrations/versions/0015_error_workflow.py) on SQLite and
PostgreSQL: the actor column goes and comes back, and the users of the errors
already stored are counted into the `user` facet on the way up."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from storage import keys
from storage.queries import facets as fq
from storage.store import Store
from tests.storage.test_queries import NOW, Db, err
from tests.support.migrations import migrate


def _facets(store: Store) -> list[tuple[str, str, int]]:
    with store.writer.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(
            "SELECT fingerprint, value, count FROM error_group_facets WHERE facet = 'user' "
            "ORDER BY fingerprint, value"))]


def test_the_user_facet_is_backfilled_and_the_actor_column_goes_both_ways(empty_db_url: str
                                                                          ) -> None:
    store = Store(empty_db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "migrate")
    db = Db(store, project)
    db.ingest(errors=[err("a", NOW - 50, user_id="u1"), err("a", NOW - 40, user_id="u2"),
                      err("a", NOW - 30, user_id="u1"), err("b", NOW - 20, user_id=""),
                      err("c", NOW - 10, user_id="x" * 300)])
    written = _facets(store)
    assert written == [("a", "u1", 2), ("a", "u2", 1), ("c", "x" * 200, 1)]

    migrate(store, command.downgrade, "0014")
    assert _facets(store) == []
    with store.writer.connect() as conn:
        columns = [c["name"] for c in sa.inspect(conn).get_columns("error_status_changes")]
    assert "actor" not in columns

    migrate(store, command.upgrade, "head")
    assert _facets(store) == written  # as the writer counts them
    assert fq.row_facts(store, project, ["a", "b", "c"])["a"].users == 2
    with store.writer.connect() as conn:
        columns = [c["name"] for c in sa.inspect(conn).get_columns("error_status_changes")]
    assert "actor" in columns
    store.dispose()
