"""storage/accounts/users.py, storage/accounts/login_throttle.py and the account of a
session, on both engines: passwords kept only as Argon2id hashes and verified, roles, disabling or a
new password ending the account's sessions, and the throttle (API tokens:
test_tokens.py)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from storage import schema
from storage.accounts import login_throttle, sessions, users
from storage.store import Store

NOW = 1_800_000_000_000_000
PASSWORD = "correct horse battery"


def test_a_password_is_stored_only_as_an_argon2id_hash(store: Store) -> None:
    user = users.create(store, " Ana@Example.COM ", PASSWORD, "member", NOW)
    assert user.email == "ana@example.com"
    with store.reader.connect() as conn:
        stored = conn.execute(select(schema.users.c.password_hash)).scalar_one()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored
    assert users.verify(store, "ANA@example.com", PASSWORD) == user
    assert users.verify(store, "ana@example.com", PASSWORD + "x") is None
    assert users.verify(store, "nobody@example.com", PASSWORD) is None
    assert users.verify(store, "not an address", PASSWORD) is None


def test_bad_accounts_are_refused(store: Store) -> None:
    users.create(store, "ana@example.com", PASSWORD, "viewer", NOW)
    with pytest.raises(ValueError, match="already"):
        users.create(store, "ANA@example.com", PASSWORD, "viewer", NOW)
    with pytest.raises(ValueError, match="at least 10"):
        users.create(store, "bo@example.com", "short", "viewer", NOW)
    with pytest.raises(ValueError, match="role must be"):
        users.create(store, "bo@example.com", PASSWORD, "owner", NOW)
    with pytest.raises(ValueError, match="not an email"):
        users.create(store, "bo", PASSWORD, "viewer", NOW)
    assert [u.email for u in users.list_users(store)] == ["ana@example.com"]


def test_disabling_or_a_new_password_ends_the_sessions(store: Store) -> None:
    ana = users.create(store, "ana@example.com", PASSWORD, "member", NOW)
    bo = users.create(store, "bo@example.com", PASSWORD, "viewer", NOW)
    sessions.create(store, "ana-1", NOW, NOW + 10**9, ana.id)
    sessions.create(store, "bo-1", NOW, NOW + 10**9, bo.id)
    sessions.create(store, "admin-1", NOW, NOW + 10**9)
    assert sessions.lookup(store, "ana-1", NOW) == sessions.Login(ana.id, ana.email, "member")
    assert sessions.lookup(store, "admin-1", NOW) == sessions.ADMIN_TOKEN
    assert users.set_role(store, "ana@example.com", "admin")
    assert sessions.lookup(store, "ana-1", NOW).role == "admin"  # type: ignore[union-attr]
    assert users.disable(store, "ana@example.com", NOW)
    assert sessions.lookup(store, "ana-1", NOW) is None
    assert users.verify(store, "ana@example.com", PASSWORD) is None  # disabled
    assert users.enable(store, "ana@example.com")
    assert users.verify(store, "ana@example.com", PASSWORD) is not None
    assert users.set_password(store, "bo@example.com", "a whole new password")
    assert sessions.lookup(store, "bo-1", NOW) is None
    assert users.verify(store, "bo@example.com", "a whole new password") is not None
    assert users.verify(store, "bo@example.com", PASSWORD) is None
    assert sessions.lookup(store, "admin-1", NOW) == sessions.ADMIN_TOKEN  # untouched
    assert not users.disable(store, "nobody@example.com", NOW)


def test_the_throttle_counts_failures_in_the_window(store: Store) -> None:
    subjects = ["client:10.0.0.1", "email:ana@example.com"]
    for i in range(login_throttle.LIMIT - 1):
        login_throttle.record_failure(store, subjects, NOW + i)
    assert login_throttle.retry_after(store, subjects, NOW + 10) == 0
    login_throttle.record_failure(store, subjects, NOW + 10)
    wait = login_throttle.retry_after(store, ["email:ana@example.com"], NOW + 20)
    assert wait == login_throttle.WINDOW_US // 1_000_000
    assert login_throttle.retry_after(store, ["email:bo@example.com"], NOW + 20) == 0
    # Once the oldest failure leaves the window, one more try is allowed.
    assert login_throttle.retry_after(store, subjects, NOW + login_throttle.WINDOW_US + 1) == 0
    login_throttle.clear(store, "email:ana@example.com")
    assert login_throttle.retry_after(store, ["email:ana@example.com"], NOW + 30) == 0
    # A client address has a higher limit (a team behind one NAT shares it).
    assert login_throttle.retry_after(store, ["client:10.0.0.1"], NOW + 30) == 0
    login_throttle.record_failure(store, ["client:10.0.0.1"] * 15, NOW + 40)
    assert login_throttle.retry_after(store, ["client:10.0.0.1"], NOW + 50) > 0
