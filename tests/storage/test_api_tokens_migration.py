"""Migration 0022 (storage/migrations/versions/0022_api_tokens.py) on SQLite and
PostgreSQL: personal tokens made before scopes keep working, as their account with
every scope over all projects (what they could do before), keep their ids, and new
ones are numbered after them; going back keeps personal tokens and revokes those a
narrower token would have become wider."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from storage.accounts import tokens
from storage.audit.log import Actor
from storage.store import Store
from tests.support.migrations import migrate

CLI = Actor.cli()

NOW = 1_800_000_000_000_000
OLD = "snd_" + "a" * 43


def test_old_personal_tokens_carry_over_and_back(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0021")
    with store.writer.begin() as conn:
        conn.execute(sa.text("INSERT INTO users (id, email, password_hash, role, created_us) "
                             "VALUES (7, 'ana@example.com', 'x', 'member', 1)"))
        conn.execute(sa.text(
            "INSERT INTO user_tokens (id, user_id, token_hash, name, created_us, revoked_us) "
            "VALUES (3, 7, :h, 'ci', 5, NULL), (4, 7, :r, 'old', 5, 6)"),
            {"h": tokens.token_hash(OLD), "r": tokens.token_hash(OLD + "r")})
    migrate(store, command.upgrade, "0022")
    found = tokens.authenticate(store, OLD, NOW)
    assert found is not None
    assert (found.id, found.user_id, found.email, found.role, found.scopes,
            found.project_ids, found.created_by) == (
        3, 7, "ana@example.com", "member", {"admin"}, None, "ana@example.com")
    assert tokens.authenticate(store, OLD + "r", NOW) is None  # revoked stays revoked
    migrate(store, command.upgrade, "head")  # making a token also writes the audit log
    _, narrow = tokens.create(store, "read only", ["read"], NOW, CLI, 7)
    _, service = tokens.create(store, "svc", ["admin"], NOW, CLI)
    assert (narrow.id, service.id) == (5, 6)  # after the ids carried over

    migrate(store, command.downgrade, "0021")
    with store.reader.connect() as conn:
        back = {r.id: r.revoked_us for r in conn.execute(sa.text(
            "SELECT id, revoked_us FROM user_tokens"))}
    assert back == {3: None, 4: 6, 5: NOW}  # the narrow one revoked; no service token
    store.dispose()
