"""Sessions, through the real server: several collectors on one database share the
generated admin token and the sessions (a login made through one is valid on the
others, a logout through one ends it on all, rotating the token logs everyone out);
the login's `next` only leads to this site; cookies are Secure over HTTPS, also
behind a trusted proxy; anti-forgery tokens belong to one session."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable

import pytest
import requests
from sqlalchemy import text

from tests.dashboard.data import ADMIN_TOKEN
from tests.support.server import REPO, Projects, Server

TOKEN = re.compile(r"^\s+(sadm_\S+)$", re.MULTILINE)


XSRF = re.compile(r'name="_xsrf" value="([^"]+)"')


def xsrf_of(html: str) -> str:
    found = XSRF.search(html)
    assert found is not None, html
    return found.group(1)


def login(server: Server, token: str = ADMIN_TOKEN) -> requests.Session:
    session = requests.Session()
    xsrf = xsrf_of(session.get(server.base + "/login", timeout=10).text)
    answer = session.post(server.base + "/login", timeout=10, allow_redirects=False,
                          data={"_xsrf": xsrf, "token": token, "next": "/"})
    assert answer.status_code == 303, answer.text
    return session


def reads(server: Server, session: requests.Session | None = None,
          token: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return (session or requests).get(server.base + "/api/v1/projects", headers=headers,
                                     timeout=10).status_code


@pytest.mark.postgres
def test_collectors_on_one_database_share_token_and_sessions(
        start: Callable[..., Server], pg_url: str) -> None:
    first = start(pg_url)
    token = TOKEN.search(first.wait_for_log("Log in at")).group(1)  # type: ignore[union-attr]
    second = start(pg_url)
    session = login(first, token)
    assert reads(second, session) == 200  # the cookie made on the first collector
    assert reads(second, token=token) == 200
    assert second.stop() == 0
    assert "sadm_" not in second.log()  # only the first collector generated a token
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    rotated = subprocess.run([sys.executable, "-m", "sounding", "admin-token", "rotate"],
                             cwd=REPO, env={**env, "SOUNDING_DATABASE_URL": pg_url},
                             capture_output=True, text=True, timeout=60)
    assert rotated.returncode == 0, rotated.stderr
    new_token = re.search(r"admin token: (sadm_\S+)", rotated.stdout).group(1)  # type: ignore
    third = start(pg_url)
    assert reads(third, token=new_token) == 200
    assert reads(third, token=token) == 401
    assert reads(third, session) == 401  # every session was logged out


@pytest.mark.postgres
def test_rotate_refuses_a_configured_token(pg_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    refused = subprocess.run([sys.executable, "-m", "sounding", "admin-token", "rotate"],
                             cwd=REPO, capture_output=True, text=True, timeout=60,
                             env={**env, "SOUNDING_DATABASE_URL": pg_url,
                                  "SOUNDING_ADMIN_TOKEN": "a-configured-admin-token"})
    assert refused.returncode == 2
    assert "configured" in refused.stderr


def dashboard(start: Callable[..., Server], db_url: str, **env: str) -> Server:
    return start(db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN, **env})


def logout(server: Server, session: requests.Session) -> None:
    page = session.get(server.base + "/projects/acme/errors", timeout=10)
    answer = session.post(server.base + "/logout", data={"_xsrf": xsrf_of(page.text)},
                          timeout=10, allow_redirects=False)
    assert answer.status_code == 303 and answer.headers["Location"] == "/login"


def test_logout_ends_the_session_on_every_collector(start: Callable[..., Server],
                                                    db_url: str) -> None:
    first = dashboard(start, db_url)
    second = dashboard(start, db_url)
    session = login(first)
    cookie = session.cookies["sounding_session"]
    assert reads(first, session) == 200 and reads(second, session) == 200
    (row,) = first.query("SELECT token_hash, expires_us FROM dashboard_sessions")
    assert row.token_hash not in cookie  # only a hash of the token is kept
    logout(first, session)
    assert first.query("SELECT token_hash FROM dashboard_sessions") == []
    stolen = requests.Session()
    stolen.cookies.set("sounding_session", cookie)  # a copy kept from before the logout
    assert reads(first, stolen) == 401
    assert reads(second, stolen) == 401
    page = stolen.get(first.base + "/projects/acme/errors", timeout=10, allow_redirects=False)
    assert page.status_code == 302 and page.headers["Location"].startswith("/login")
    again = login(second)  # logging in again works, on any collector
    assert reads(first, again) == 200


def test_expired_sessions_are_refused_and_removed(dash_projects: Projects) -> None:
    # Every session of the module's collector expires here: the fresh login's is then
    # the only one, whatever ran before.
    server = dash_projects.take()
    old = login(server)
    with server.db().begin() as conn:
        conn.execute(text("UPDATE dashboard_sessions SET expires_us = 1"))
    assert reads(server, old) == 401
    fresh = login(server)  # a login clears what has expired
    assert reads(server, fresh) == 200
    assert len(server.query("SELECT token_hash FROM dashboard_sessions")) == 1


@pytest.mark.parametrize(("target", "location"), [
    ("/projects/acme/errors?status=resolved", "/projects/acme/errors?status=resolved"),
    ("/projects/caf\u00e9/errors", "/projects/caf%C3%A9/errors"),
    ("//evil.example/x", "/"), ("/\\evil.example", "/"), ("/\\/evil.example", "/"),
    ("https://evil.example/", "/"), ("javascript:alert(1)", "/"), ("evil.example", "/"),
    ("/\r\nSet-Cookie: a=b", "/"), ("/x\rLocation: //evil", "/"), ("/\t/evil.example", "/"),
    ("/x\x7f", "/"), ("/x\u0000y", "/x%20y"), ("", "/"),
])
def test_login_goes_on_only_to_a_path_of_this_site(dash_server: Server, target: str,
                                                   location: str) -> None:
    server = dash_server
    session = requests.Session()
    form = session.get(server.base + "/login", params={"next": target}, timeout=10)
    assert form.status_code == 200
    answer = session.post(server.base + "/login", timeout=10, allow_redirects=False,
                          data={"_xsrf": xsrf_of(form.text), "token": ADMIN_TOKEN,
                                "next": target})
    assert answer.status_code == 303, answer.text
    assert answer.headers["Location"] == location


def _cookie_flags(response: requests.Response, name: str) -> list[str]:
    (header,) = [h for h in response.raw.headers.getlist("Set-Cookie")
                 if h.startswith(name + "=")]
    return [part.strip().lower() for part in header.split(";")[1:]]


def _login_raw(server: Server, headers: dict[str, str]) -> requests.Response:
    """The login form and its POST with explicit cookies (a cookie jar would not send a
    Secure cookie back over plain HTTP, which is what a TLS proxy forwards)."""
    form = requests.get(server.base + "/login", headers=headers, timeout=10)
    nonce = form.cookies["sounding_login"]
    return requests.post(server.base + "/login", timeout=10, allow_redirects=False,
                         headers={**headers, "Cookie": f"sounding_login={nonce}"},
                         data={"_xsrf": xsrf_of(form.text), "token": ADMIN_TOKEN})


def test_cookies_are_secure_behind_a_trusted_tls_proxy(sqlite_url: str,
                                                       start: Callable[..., Server]) -> None:
    proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    trusting = dashboard(start, sqlite_url, SOUNDING__RECEIVERS__HTTP__XHEADERS="true")
    answer = _login_raw(trusting, proxied)
    assert answer.status_code == 303, answer.text
    assert {"secure", "httponly", "samesite=lax"} <= set(
        _cookie_flags(answer, "sounding_session"))
    plain = _login_raw(trusting, {})
    assert "secure" not in _cookie_flags(plain, "sounding_session")
    assert trusting.stop() == 0
    # By default the headers are not trusted: anyone could send them.
    default = dashboard(start, sqlite_url)
    untrusted = _login_raw(default, proxied)
    assert untrusted.status_code == 303
    assert "secure" not in _cookie_flags(untrusted, "sounding_session")


def test_a_forgery_token_not_derived_from_the_session_is_refused(
        dash_projects: Projects) -> None:
    server = dash_projects.take()
    server.post("/ingest/errors", {"exception_class": "E", "message": "m", "backtrace": [],
                                   "fingerprint": "xsrf-bound"})
    (group,) = server.project_rows("error_groups", "id")
    url = server.project_url(f"/errors/{group.id}/status")
    api = server.project_api(f"/error-groups/{group.id}/status")
    victim = login(server)
    attacker = login(server)
    theirs = xsrf_of(attacker.get(server.project_url("/errors"), timeout=10).text)
    # The double-submit pair an attacker can plant: a cookie and a field they chose.
    victim.cookies.set("_xsrf", "attacker-chosen")
    for token in ("attacker-chosen", theirs, ""):
        forged = victim.post(url, data={"status": "resolved", "_xsrf": token}, timeout=10,
                             allow_redirects=False)
        assert forged.status_code == 403, token
        forged_api = victim.post(api, json={"status": "resolved"}, timeout=10,
                                 headers={"X-XSRFToken": token})
        assert forged_api.status_code == 403, token
    assert server.query("SELECT status FROM error_groups WHERE id = :i", i=group.id)[0][0] \
        == "open"
    mine = xsrf_of(victim.get(server.project_url("/errors"), timeout=10).text)
    assert victim.post(api, json={"status": "ignored"}, headers={"X-XSRFToken": mine},
                       timeout=10).status_code == 200
    genuine = victim.post(url, data={"status": "resolved", "_xsrf": mine}, timeout=10,
                          allow_redirects=False)
    assert genuine.status_code == 303


def test_login_needs_the_forms_own_token(dash_projects: Projects) -> None:
    server = dash_projects.take()
    sessions = server.query("SELECT token_hash FROM dashboard_sessions")
    # A cross-site form posting the attacker's own token (login CSRF): no nonce cookie
    # of this browser matches it, whatever _xsrf cookie the attacker managed to plant.
    attacker = requests.Session()
    theirs = xsrf_of(attacker.get(server.base + "/login", timeout=10).text)
    for cookies, token in (({}, theirs), ({"_xsrf": "x"}, "x"), ({}, "")):
        answer = requests.post(server.base + "/login", cookies=cookies, timeout=10,
                               allow_redirects=False,
                               data={"_xsrf": token, "token": ADMIN_TOKEN, "next": "/"})
        assert answer.status_code == 403, (cookies, token)
        assert "sounding_session" not in answer.cookies
        assert "Try again" in answer.text
    assert server.query("SELECT token_hash FROM dashboard_sessions") == sessions  # none made
