"""storage/accounts/project_roles.py and roles.py on both engines: an account's role in a
project is the higher of its global role and its role there; a provider's login replaces
the project roles whole (a project it names that does not exist is skipped); a role set
by hand is recorded; an account with project roles can be deleted (no row left to its
name)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from storage import schema
from storage.accounts import identities, project_roles, sessions, users
from storage.accounts.identities import Claimed
from storage.accounts.roles import role_in
from storage.audit.log import Actor
from storage.projects import create_project
from storage.store import Store

NOW = 1_800_000_000_000_000


def test_the_role_in_a_project_is_the_higher_of_the_two() -> None:
    assert role_in("viewer", {1: "member"}, 1) == "member"
    assert role_in("admin", {1: "member"}, 1) == "admin"
    assert role_in("none", {1: "member"}, 2) == "none"
    assert role_in("viewer", {}, 2) == "viewer"


def test_a_login_replaces_the_project_roles_and_skips_unknown_projects(store: Store) -> None:
    acme, _ = create_project(store, "acme")
    beta, _ = create_project(store, "beta")
    claimed = Claimed("corp", "fay-1", "fay@example.com", True, "none",
                      {"acme": "member", "later": "admin"})
    fay = identities.login(store, claimed, NOW)
    with store.reader.connect() as conn:
        assert project_roles.of_user(conn, fay.id) == {acme: "member"}
    identities.login(store, Claimed("corp", "fay-1", "fay@example.com", True, "viewer",
                                    {"beta": "admin"}), NOW + 1)
    with store.reader.connect() as conn:
        assert project_roles.of_user(conn, fay.id) == {beta: "admin"}
    token = "a session of fay"
    sessions.create(store, token, NOW, NOW + 10**12, fay.id, "corp")
    login = sessions.lookup(store, token, NOW + 2)
    assert login is not None
    assert (login.role_in(acme), login.role_in(beta), login.highest_role()) == (
        "viewer", "admin", "admin")


def test_a_role_set_by_hand_is_checked_and_the_account_deleted_with_it(store: Store) -> None:
    create_project(store, "acme")
    users.create(store, "hal@example.com", "correct horse battery", "none", NOW)
    assert project_roles.set_role(store, "HAL@example.com", "acme", "admin", Actor.cli())
    assert not project_roles.set_role(store, "nobody@example.com", "acme", "admin",
                                      Actor.cli())
    with pytest.raises(ValueError, match="no project named 'gamma'"):
        project_roles.set_role(store, "hal@example.com", "gamma", "admin", Actor.cli())
    with pytest.raises(ValueError, match="a project role must be one of"):
        project_roles.set_role(store, "hal@example.com", "acme", "owner", Actor.cli())
    assert users.delete_user(store, "hal@example.com")
    with store.reader.connect() as conn:
        left = conn.execute(select(func.count()).select_from(schema.user_project_roles))
        assert left.scalar_one() == 0
