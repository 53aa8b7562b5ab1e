"""`sounding users create|list|set-role|set-password|disable|enable|delete`, on SQLite
and PostgreSQL; the password from standard input, never the command line."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from storage.accounts import users
from storage.store import Store
from tests.sounding.cli.conftest import Run

PASSWORD = "correct horse battery"


def test_users_commands(cli: Callable[..., Run], db_url: str,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    created = cli("users", "create", "--email", "Ana@Example.com", "--role", "admin",
                  "--password-stdin", db_url=db_url)
    assert created.code == 0, created.err
    assert "created ana@example.com (admin)" in created.out
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    refused = cli("users", "create", "--email", "bo@example.com", "--role", "viewer",
                  "--password-stdin")
    assert refused.code == 2 and "at least 10" in refused.err
    assert cli("users", "create", "--email", "bo@example.com", "--role", "owner",
               "--password-stdin").code == 2  # argparse: not a role
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert cli("users", "create", "--email", "bo@example.com", "--role", "viewer",
               "--password-stdin").code == 0
    assert cli("users", "set-role", "--email", "bo@example.com", "--role", "member").code == 0
    assert cli("users", "disable", "--email", "ana@example.com").code == 0
    listed = cli("users", "list")
    rows = [line.split()[:3] for line in listed.out.splitlines()[1:]]
    assert rows == [["ana@example.com", "admin", rows[0][2]],
                    ["bo@example.com", "member", rows[1][2]]]
    assert "disabled" in listed.out.splitlines()[1]
    store = Store(db_url)
    try:
        assert users.verify(store, "ana@example.com", PASSWORD) is None  # disabled
        assert cli("users", "enable", "--email", "ana@example.com").code == 0
        assert users.verify(store, "ana@example.com", PASSWORD) is not None
        monkeypatch.setattr("sys.stdin", io.StringIO("another long password\n"))
        assert cli("users", "set-password", "--email", "bo@example.com",
                   "--password-stdin").code == 0
        assert users.verify(store, "bo@example.com", "another long password") is not None
        assert cli("users", "delete", "--email", "bo@example.com").code == 0
        assert cli("users", "delete", "--email", "bo@example.com").code == 1
        assert [u.email for u in users.list_users(store)] == ["ana@example.com"]
    finally:
        store.dispose()
