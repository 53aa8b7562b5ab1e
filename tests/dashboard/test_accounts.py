"""Team accounts through the real server: disabling an account on the Users page ends
its sessions at once, a new password (Account page) ends the other sessions but keeps
this one, a wrong current password changes nothing, and the first-run output says how
the first account is made."""

from __future__ import annotations

from collections.abc import Callable

import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.dashboard.test_roles import PASSWORD, create_user, password_login
from tests.dashboard.test_sessions import xsrf_of
from tests.support.server import Server

NEW = "a brand new password"


def session_of(server: Server, email: str, password: str = PASSWORD) -> requests.Session:
    answer = password_login(server, email, password)
    assert answer.status_code == 303, answer.text
    return answer.session  # type: ignore[attr-defined, no-any-return]


def reads(server: Server, session: requests.Session) -> int:
    return session.get(server.base + "/api/v1/projects", timeout=10).status_code


def test_disable_and_password_change_end_sessions(start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    create_user(server.db_url, "ana@example.com", "member")
    create_user(server.db_url, "bo@example.com", "viewer")
    first, second = session_of(server, "ana@example.com"), session_of(server, "ana@example.com")
    page = first.get(server.base + "/account", timeout=10).text
    wrong = first.post(server.base + "/account/password", timeout=10, data={
        "_xsrf": xsrf_of(page), "current": "not the password", "new": NEW})
    assert wrong.status_code == 400 and "not right" in wrong.text
    assert reads(server, second) == 200
    changed = first.post(server.base + "/account/password", timeout=10, data={
        "_xsrf": xsrf_of(page), "current": PASSWORD, "new": NEW})
    assert changed.status_code == 200 and "Password changed" in changed.text
    assert reads(server, first) == 200  # this browser logged in again
    assert reads(server, second) == 401  # the other session ended
    assert password_login(server, "ana@example.com").status_code == 401  # old password
    session_of(server, "ana@example.com", NEW)

    bo = session_of(server, "bo@example.com")
    assert reads(server, bo) == 200
    disabled = requests.post(server.base + "/users", timeout=10, allow_redirects=False,
                             headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                             data={"action": "disable", "email": "bo@example.com"})
    assert disabled.status_code == 303, disabled.text
    assert reads(server, bo) == 401
    assert password_login(server, "bo@example.com").status_code == 401
    assert "sounding users create --email" not in server.log()  # configured token: no first run


def test_the_first_run_says_how_to_make_the_first_account(start: Callable[..., Server]) -> None:
    server = start()
    assert "sounding users create --email you@example.com --role admin" in \
        server.wait_for_log("Users page")
