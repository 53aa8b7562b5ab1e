"""Roles enforced by the server, on every state-changing route of the dashboard: the
table below names the least role of each; a route with a POST handler missing from it
fails the test, so a new one cannot skip the check. Logins by email and password
(accounts made with `sounding users create`, its real entry point), personal API
tokens with their account's role, and the login throttle (429 with Retry-After)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
import requests

from dashboard.app import Dashboard
from tests.dashboard.data import ADMIN_TOKEN
from tests.dashboard.test_sessions import xsrf_of
from tests.support.server import REPO, Server, start_server

PASSWORD = "correct horse battery"
# The least role of each state-changing route (its path pattern).
LEAST_ROLE = {
    r"/login": None,  # no login needed: the form itself
    r"/logout": "none",
    r"/projects/([^/]+)/errors/([0-9]+)/status": "member",
    r"/projects/([^/]+)/errors/bulk-status": "member",
    r"/projects/([^/]+)/errors/merge": "member",
    r"/projects/([^/]+)/crons": "member",
    r"/projects/([^/]+)/errors/([0-9]+)/unmerge": "member",
    r"/setup": "admin",
    r"/projects/([^/]+)/setup": "admin",
    r"/projects/([^/]+)/policy": "admin",
    r"/api/v1/projects/([^/]+)/policy": "admin",
    r"/projects/([^/]+)/alerts/destinations": "admin",
    r"/projects/([^/]+)/alerts/destinations/([0-9]+)/remove": "admin",
    r"/projects/([^/]+)/alerts/rules": "admin",
    r"/projects/([^/]+)/alerts/rules/([0-9]+)/remove": "admin",
    r"/projects/([^/]+)/alerts/test": "admin",
    r"/projects/([^/]+)/stats/limits": "admin",
    r"/api/v1/projects/([^/]+)/limits": "admin",
    r"/api/v1/projects/([^/]+)/error-groups/([0-9]+)/status": "member",
    r"/api/v1/projects/([^/]+)/error-groups/bulk-status": "member",
    r"/api/v1/projects/([^/]+)/error-groups/merge": "member",
    r"/api/v1/projects/([^/]+)/crons": "member",
    r"/api/v1/projects/([^/]+)/error-groups/([0-9]+)/unmerge": "member",
    r"/users": "admin",
    r"/tokens": "none",
    r"/tokens/([0-9]+)/revoke": "none",
    r"/account/password": "none",
    # A bearer token only, never a session (dashboard/release_auth.py: a member's
    # token): tests/dashboard/test_release_api.py tests who may.
    r"/api/0/organizations/([^/]+)/chunk-upload/?": None,
    r"/api/0/organizations/([^/]+)/artifactbundle/assemble/?": None,
    r"/api/0/organizations/([^/]+)/releases/?": None,
    r"/api/0/organizations/([^/]+)/releases/([^/]+)/?": None,
    r"/api/0/organizations/([^/]+)/releases/([^/]+)/deploys/?": None,
}
# `none`: an account of no global role (only the projects it has a role in: none here).
RANK = {"none": -1, "viewer": 0, "member": 1, "admin": 2}
WRITES = ("post", "put", "patch", "delete")


def writing_routes() -> list[str]:
    """Every route whose handler answers another method than GET/HEAD/OPTIONS."""
    routes = Dashboard(None, {}).routes()  # type: ignore[arg-type]  # routes need no store
    return [pattern for pattern, handler, *_ in routes
            if any(name in vars(cls) for cls in handler.__mro__ for name in WRITES
                   if cls.__module__.startswith("dashboard"))]


def concrete(pattern: str) -> str:
    path = pattern.replace("([^/]+)", "acme").replace("([0-9]+)", "1")
    assert "(" not in path, f"add a sample value for {pattern}"
    return path


def create_user(server_db: str, email: str, role: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    done = subprocess.run(
        [sys.executable, "-m", "sounding", "users", "create", "--email", email, "--role", role,
         "--password-stdin"], input=PASSWORD + "\n", cwd=REPO, capture_output=True,
        text=True, timeout=60, env={**env, "SOUNDING_DATABASE_URL": server_db})
    assert done.returncode == 0, done.stderr


def password_login(server: Server, email: str, password: str = PASSWORD
                   ) -> requests.Response:
    session = requests.Session()
    xsrf = xsrf_of(session.get(server.base + "/login", timeout=10).text)
    answer = session.post(server.base + "/login", timeout=10, allow_redirects=False,
                          data={"_xsrf": xsrf, "email": email, "password": password,
                                "next": "/"})
    answer.session = session  # type: ignore[attr-defined]
    return answer


@pytest.fixture(scope="module")
def accounts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('roles') / 'sounding.db'}"
    server = start_server(url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    logins: dict[str, requests.Session] = {}
    for role in RANK:
        create_user(url, f"{role}@example.com", role)
        answer = password_login(server, f"{role}@example.com")
        assert answer.status_code == 303, answer.text
        logins[role] = answer.session  # type: ignore[attr-defined]
    yield server, logins
    assert server.stop() == 0, server.log()
    assert "Traceback" not in server.log(), server.log()


def test_every_writing_route_has_a_least_role() -> None:
    assert set(writing_routes()) == set(LEAST_ROLE), \
        "a route changes state: give it a write_role and add it to LEAST_ROLE"


@pytest.mark.parametrize("pattern", sorted(p for p, r in LEAST_ROLE.items() if r))
def test_each_role_is_refused_below_the_least_role(
        accounts: tuple[Server, dict[str, requests.Session]], pattern: str) -> None:
    server, logins = accounts
    least = LEAST_ROLE[pattern]
    assert least is not None
    for role, session in logins.items():
        if pattern == r"/logout":
            continue  # would end the session the other cases use; nobody is below none
        xsrf = xsrf_of(session.get(server.base + "/account", timeout=10).text)
        answer = session.post(server.base + concrete(pattern), timeout=10,
                              allow_redirects=False, data={"_xsrf": xsrf},
                              headers={"X-XSRFToken": xsrf})
        if RANK[role] < RANK[least]:
            assert answer.status_code == 403, (role, pattern, answer.status_code)
            assert f"needs the {least} role" in answer.text
        else:
            assert answer.status_code not in (401, 403), (role, pattern, answer.text)


def test_actor_is_the_account_and_the_admin_token_acts_as_admin(
        accounts: tuple[Server, dict[str, requests.Session]]) -> None:
    server, logins = accounts
    page = logins["member"].get(server.base + "/account", timeout=10).text
    assert "member@example.com" in page and 'href="/users"' not in page
    assert 'href="/users"' in logins["admin"].get(server.base + "/account", timeout=10).text
    assert logins["viewer"].get(server.base + "/users", timeout=10).status_code == 403
    bearer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    assert requests.post(server.base + "/users", headers=bearer, timeout=10,
                         data={"action": "disable", "email": "nobody@example.com"}
                         ).status_code == 404  # past the role check: admin


def test_personal_tokens_carry_their_accounts_role(
        accounts: tuple[Server, dict[str, requests.Session]]) -> None:
    server, logins = accounts
    tokens = {}
    for role in ("viewer", "member"):
        session = logins[role]
        xsrf = xsrf_of(session.get(server.base + "/account", timeout=10).text)
        page = session.post(server.base + "/tokens", timeout=10,
                            data={"_xsrf": xsrf, "name": "ci", "scope": "admin"}).text
        tokens[role] = re.search(r'id="new-token">(snd_[^<]+)<', page).group(1)  # type: ignore
    status_url = server.base + "/api/v1/projects/acme/error-groups/1/status"
    for role, token in tokens.items():
        headers = {"Authorization": f"Bearer {token}"}
        assert requests.get(server.base + "/api/v1/projects", headers=headers,
                            timeout=10).status_code == 200
        changed = requests.post(status_url, headers=headers, json={"status": "resolved"},
                                timeout=10)
        assert (changed.status_code == 403) == (role == "viewer"), changed.text
    # Revoked (by id, from the Tokens page): refused at once.
    session = logins["viewer"]
    page = session.get(server.base + "/tokens", timeout=10).text
    token_id = re.search(r'/tokens/(\d+)/revoke', page).group(1)  # type: ignore
    assert session.post(server.base + f"/tokens/{token_id}/revoke", timeout=10,
                        data={"_xsrf": xsrf_of(page)}).status_code == 200
    assert requests.get(server.base + "/api/v1/projects", timeout=10, headers={
        "Authorization": f"Bearer {tokens['viewer']}"}).status_code == 401


def test_logins_are_throttled_per_email(start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    create_user(server.db_url, "ana@example.com", "member")
    for _ in range(5):
        assert password_login(server, "ana@example.com", "wrong password!").status_code == 401
    throttled = password_login(server, "ana@example.com")  # even the right password
    assert throttled.status_code == 429
    assert 0 < int(throttled.headers["Retry-After"]) <= 900
    assert password_login(server, "other@example.com").status_code == 401  # not throttled
