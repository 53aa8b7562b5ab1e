"""storage/accounts/tokens.py on both engines: a token kept only as its SHA-256, its
scopes and projects (`Token.allows`, the one rule), expiry, revocation, a personal
token dying with its account's access, and its last use noted at most once a minute."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from storage import keys, schema
from storage.accounts import tokens, users
from storage.audit.log import Actor
from storage.store import Store

CLI = Actor.cli()

NOW = 1_800_000_000_000_000
MINUTE = 60 * 1_000_000
PASSWORD = "correct horse battery"


def projects(store: Store, *names: str) -> dict[str, int]:
    for name in names:
        keys.create_key(store, name)
    return {n: next(iter(tokens.project_ids(store, [n]))) for n in names}


def test_a_token_is_shown_once_and_kept_only_as_its_hash(store: Store) -> None:
    secret, token = tokens.create(store, "ci", ["read"], NOW, CLI)
    assert secret.startswith("snd_") and len(secret) == 4 + 43
    with store.reader.connect() as conn:
        stored = [tuple(r) for r in conn.execute(select(schema.api_tokens))]
    assert secret not in repr(stored) and tokens.token_hash(secret) in repr(stored)
    assert tokens.authenticate(store, secret, NOW) == tokens.get(store, token.id)
    assert tokens.authenticate(store, secret + "x", NOW) is None
    assert tokens.authenticate(store, "sadm_" + secret[4:], NOW) is None
    assert token.kind == "service" and token.user_id is None and token.project_ids is None


def test_scopes_and_projects_bound_what_a_token_allows(store: Store) -> None:
    ids = projects(store, "acme", "beta")
    _, reader = tokens.create(store, "r", ["read"], NOW, CLI, projects=[ids["acme"]])
    assert reader.project_ids == {ids["acme"]}
    assert reader.allows("read", ids["acme"]) and not reader.allows("read", ids["beta"])
    assert not reader.allows("read", None)  # beyond any one project: all projects only
    assert not reader.allows("project-admin", ids["acme"])
    assert reader.reaches(ids["acme"]) and not reader.reaches(ids["beta"])
    _, admin = tokens.create(store, "a", ["admin"], NOW, CLI)
    assert all(admin.allows(s, p) for s in tokens.SCOPES for p in (None, *ids.values()))
    _, two = tokens.create(store, "two", ["releases", "read"], NOW, CLI)
    assert two.scopes == {"read", "releases"} and not two.allows("ingest-admin", ids["acme"])


@pytest.mark.parametrize(("args", "problem"), [
    ({"scopes": []}, "at least one scope"),
    ({"scopes": ["read", "write"]}, "unknown scope 'write'"),
    ({"name": " "}, "name must be"),
    ({"name": "x" * 201}, "name must be"),
    ({"expires_us": NOW}, "in the future"),
    ({"projects": []}, "at least one project"),
    ({"projects": [999]}, "no project 999"),
    ({"user_id": 999}, "no account 999"),
])
def test_bad_tokens_are_refused(store: Store, args: dict, problem: str) -> None:
    wanted = {"name": "ci", "scopes": ["read"], **args}
    with pytest.raises(ValueError, match=problem):
        tokens.create(store, wanted.pop("name"), wanted.pop("scopes"), NOW, CLI, **wanted)
    with pytest.raises(ValueError, match="no project named 'nope'"):
        tokens.project_ids(store, ["nope"])
    assert tokens.list_tokens(store) == []


def test_expired_and_revoked_tokens_are_refused(store: Store) -> None:
    expiring, token = tokens.create(store, "ci", ["read"], NOW, CLI, expires_us=NOW + MINUTE)
    assert tokens.authenticate(store, expiring, NOW + MINUTE - 1) is not None
    assert tokens.authenticate(store, expiring, NOW + MINUTE) is None
    assert token.state(NOW + MINUTE) == "expired"
    kept, other = tokens.create(store, "ci", ["read"], NOW, CLI)
    assert tokens.revoke(store, other.id, NOW, CLI)
    assert not tokens.revoke(store, other.id, NOW, CLI)  # once
    assert tokens.authenticate(store, kept, NOW) is None
    assert tokens.get(store, other.id).state(NOW) == "revoked"  # type: ignore[union-attr]


def test_personal_tokens_follow_their_account(store: Store) -> None:
    ana = users.create(store, "ana@example.com", PASSWORD, "viewer", NOW)
    bo = users.create(store, "bo@example.com", PASSWORD, "admin", NOW)
    secret, token = tokens.create(store, "laptop", ["admin"], NOW,
                                  Actor.user(ana.id, ana.email), ana.id)
    _, bos = tokens.create(store, "ci", ["read"], NOW, Actor.user(bo.id, bo.email), bo.id)
    found = tokens.authenticate(store, secret, NOW)
    assert found is not None and (found.email, found.role) == (ana.email, "viewer")
    assert [t.id for t in tokens.list_tokens(store, ana.id)] == [token.id]
    assert [t.id for t in tokens.list_tokens(store)] == [token.id, bos.id]
    assert not tokens.revoke(store, token.id, NOW, CLI, user_id=bo.id)  # not bo's
    users.set_role(store, ana.email, "member")
    assert tokens.authenticate(store, secret, NOW).role == "member"  # type: ignore[union-attr]
    users.disable(store, ana.email, NOW)
    assert tokens.authenticate(store, secret, NOW) is None
    assert tokens.get(store, token.id).state(NOW) == "account disabled"  # type: ignore
    users.enable(store, ana.email)
    assert tokens.authenticate(store, secret, NOW) is not None
    assert users.delete_user(store, ana.email)
    assert [t.id for t in tokens.list_tokens(store)] == [bos.id]
    assert tokens.authenticate(store, secret, NOW) is None


def test_last_use_is_written_at_most_once_a_minute(store: Store) -> None:
    ids = projects(store, "acme")
    secret, token = tokens.create(store, "ci", ["read"], NOW, CLI, projects=[ids["acme"]])
    assert token.last_used_us is None
    tokens.authenticate(store, secret, NOW + 5)
    tokens.authenticate(store, secret, NOW + 5 + MINUTE - 1)
    assert tokens.get(store, token.id).last_used_us == NOW + 5  # type: ignore[union-attr]
    tokens.authenticate(store, secret, NOW + 5 + MINUTE)
    assert tokens.get(store, token.id).last_used_us == NOW + 5 + MINUTE  # type: ignore
