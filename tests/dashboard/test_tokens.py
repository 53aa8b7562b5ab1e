"""API tokens against the real server, on SQLite and PostgreSQL: every scope allowed and
refused on the read API and the dashboard's API endpoints, over all projects and
limited to one (and every route under a project, from the route table, refusing a
project out of reach); a personal token held to its account's role as well; expired and
revoked tokens refused; the Tokens page making (shown once), listing (with the last
use) and revoking them; and no token in plain text in the SQLite file."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from dashboard.app import Dashboard
from model.timeutil import now_us
from storage.accounts import tokens, users
from storage.audit.log import Actor
from storage.store import Store
from tests.dashboard.data import ADMIN_TOKEN, error, post_ok
from tests.dashboard.test_roles import PASSWORD, password_login
from tests.dashboard.test_sessions import xsrf_of
from tests.support.server import Server, collectors

DAY_US = 86_400 * 1_000_000
KEYS = {"acme": "test-key-acme", "beta": "test-key-beta"}


class Served:
    """The collector, its store (to make tokens as the CLI does), and a group per project."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.store = Store(server.db_url)
        self.group: dict[str, int] = {}
        self.ids: dict[str, int] = {}

    def token(self, *scopes: str, projects: tuple[str, ...] | None = None,
              user: str | None = None, **kwargs: Any) -> str:
        user_id = None if user is None else users.find(self.store, user).id  # type: ignore
        limited = None if projects is None else [self.ids[p] for p in projects]
        secret, _ = tokens.create(self.store, "test", scopes, kwargs.pop("now", now_us()),
                                  Actor.cli(), user_id, limited, **kwargs)
        return secret

    def call(self, secret: str, request: str) -> requests.Response:
        """One of REQUESTS, with the token."""
        method, path = request.split(" ", 1)
        for name, group in self.group.items():
            path = path.replace(f"{{{name}}}", str(group))
        headers = {"Authorization": f"Bearer {secret}"}
        base = self.server.base
        if path.startswith("/setup"):  # the form's field names the project
            return requests.post(base + "/setup", headers=headers, timeout=10,
                                 data={"project": path.split("=", 1)[1]})
        if method == "POST":
            return requests.post(base + path, headers=headers, timeout=10,
                                 json={"status": "open"})
        return requests.get(base + path, headers=headers, timeout=10)


@pytest.fixture(scope="module")
def served(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Served]:
    with collectors(tmp_path_factory.mktemp("tokens")) as start:
        server = start(module_db_url, keys=KEYS, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
        out = Served(server)
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        for project, key in KEYS.items():
            post_ok(server, "/ingest/errors/batch", {"errors": [error(f"tok-{project}")]},
                    key=key)
            listed = requests.get(f"{server.base}/api/v1/projects/{project}/error-groups",
                                  headers=admin, timeout=10).json()["items"]
            out.group[project] = listed[0]["group"]["id"]
        out.ids = {p["name"]: p["id"] for p in requests.get(
            server.base + "/api/v1/projects", headers=admin, timeout=10).json()["projects"]}
        for role in ("viewer", "member", "admin"):
            users.create(out.store, f"{role}@example.com", PASSWORD, role, now_us())
        yield out
        out.store.dispose()


REQUESTS = {
    "read acme": "GET /api/v1/projects/acme/error-groups",
    "read beta": "GET /api/v1/projects/beta/error-groups",
    "page acme": "GET /projects/acme/errors",
    "release acme": "GET /api/v1/projects/acme/releases/1.0",
    "release beta": "GET /api/v1/projects/beta/releases/1.0",
    "status acme": "POST /api/v1/projects/acme/error-groups/{acme}/status",
    "status beta": "POST /api/v1/projects/beta/error-groups/{beta}/status",
    "keys acme": "POST /setup?project=acme",
    "keys beta": "POST /setup?project=beta",
    "users": "GET /users",
    "tokens": "GET /tokens",
    "audit": "GET /api/v1/audit",
}
OK, REFUSED, NOT_FOUND = 200, 403, 404
# What each token may do: its scopes, its projects (None: all), and the answer to each
# of REQUESTS (a project out of reach is one that does not exist: 404).
CASES: list[tuple[tuple[str, ...], tuple[str, ...] | None, dict[str, int]]] = [
    (("read",), None, {"read acme": OK, "read beta": OK, "page acme": OK,
                       "release acme": OK, "status acme": REFUSED, "keys acme": REFUSED,
                       "users": REFUSED, "tokens": REFUSED, "audit": REFUSED}),
    (("read",), ("acme",), {"read acme": OK, "read beta": NOT_FOUND, "page acme": OK,
                            "status acme": REFUSED, "users": REFUSED}),
    (("releases",), None, {"release acme": OK, "release beta": OK, "read acme": REFUSED,
                           "page acme": REFUSED, "status acme": REFUSED,
                           "keys acme": REFUSED}),
    (("releases",), ("acme",), {"release acme": OK, "release beta": NOT_FOUND,
                                "read acme": REFUSED}),
    (("project-admin",), None, {"status acme": OK, "status beta": OK, "read acme": REFUSED,
                                "keys acme": REFUSED, "users": REFUSED}),
    (("project-admin",), ("acme",), {"status acme": OK, "status beta": NOT_FOUND,
                                     "read acme": REFUSED}),
    (("ingest-admin",), None, {"keys acme": OK, "keys beta": OK, "read acme": REFUSED,
                               "status acme": REFUSED, "users": REFUSED}),
    (("ingest-admin",), ("acme",), {"keys acme": OK, "keys beta": REFUSED,
                                    "status acme": REFUSED}),
    (("admin",), None, {name: OK for name in REQUESTS}),
    (("admin",), ("acme",), {"read acme": OK, "read beta": NOT_FOUND, "status acme": OK,
                             "status beta": NOT_FOUND, "keys acme": OK, "keys beta": REFUSED,
                             "release beta": NOT_FOUND, "users": REFUSED,
                             "tokens": REFUSED, "audit": REFUSED}),
    (("read", "project-admin"), ("acme",), {"read acme": OK, "status acme": OK,
                                            "status beta": NOT_FOUND, "keys acme": REFUSED}),
]


@pytest.mark.parametrize(("scopes", "limit", "expected"), CASES,
                         ids=[f"{'+'.join(s)}-{'+'.join(p) if p else 'all'}"
                              for s, p, _ in CASES])
def test_a_service_token_reaches_its_scopes_and_projects_only(
        served: Served, scopes: tuple[str, ...], limit: tuple[str, ...] | None,
        expected: dict[str, int]) -> None:
    secret = served.token(*scopes, projects=limit)
    for name, status in expected.items():
        answer = served.call(secret, REQUESTS[name])
        assert answer.status_code == status, (name, answer.text[:300])
    listed = served.call(secret, "GET /api/v1/projects")
    if "read" in scopes or "admin" in scopes:
        assert sorted(p["name"] for p in listed.json()["projects"]) == sorted(limit or KEYS)
    else:
        assert listed.status_code == REFUSED
        assert "it needs read" in listed.json()["error"]


def test_a_personal_token_is_held_to_its_role_and_its_scopes(served: Served) -> None:
    as_viewer = served.token("admin", user="viewer@example.com")
    assert served.call(as_viewer, REQUESTS["read acme"]).status_code == OK
    refused = served.call(as_viewer, REQUESTS["status acme"])
    assert refused.status_code == REFUSED and "needs the member role" in refused.text
    assert served.call(as_viewer, REQUESTS["users"]).status_code == REFUSED
    reader = served.token("read", user="member@example.com")
    refused = served.call(reader, REQUESTS["status acme"])
    assert refused.status_code == REFUSED and "scopes (read)" in refused.text
    triage = served.token("project-admin", projects=("beta",), user="member@example.com")
    assert served.call(triage, REQUESTS["status beta"]).status_code == OK
    assert served.call(triage, REQUESTS["status acme"]).status_code == NOT_FOUND
    users.disable(served.store, "member@example.com", now_us())
    try:
        assert served.call(triage, REQUESTS["status beta"]).status_code == 401
    finally:
        users.enable(served.store, "member@example.com")


def test_a_change_through_a_token_names_who_made_it(served: Served) -> None:
    base = served.server.base
    url = f"{base}/api/v1/projects/acme/error-groups/{served.group['acme']}"
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    for secret, actor in ((served.token("project-admin"), "service token test"),
                          (served.token("project-admin", user="member@example.com"),
                           "member@example.com (token test)")):
        for status in ("ignored", "open"):
            changed = requests.post(url + "/status", json={"status": status}, timeout=10,
                                    headers={"Authorization": f"Bearer {secret}"})
            assert changed.status_code == OK, changed.text
        history = requests.get(url, headers=admin, timeout=10).json()["history"]
        assert [(h["to_status"], h["actor"]) for h in history[:2]] == [
            ("open", actor), ("ignored", actor)]
        audit = requests.get(f"{base}/api/v1/audit", params={"action": "group"}, headers=admin,
                             timeout=10).json()
        assert [(r["actor_kind"], r["actor_name"], r["action"])
                for r in audit["entries"][:2]] == [
            ("token", actor, "group.reopen"), ("token", actor, "group.ignore")], audit


def test_expired_and_revoked_tokens_are_refused(served: Served) -> None:
    now = now_us()
    expired = served.token("admin", now=now - 2 * DAY_US, expires_us=now - DAY_US)
    assert served.call(expired, REQUESTS["read acme"]).status_code == 401
    soon = served.token("read", expires_us=now + DAY_US)
    assert served.call(soon, REQUESTS["read acme"]).status_code == OK
    token = tokens.authenticate(served.store, soon, now_us())
    assert token is not None and tokens.revoke(served.store, token.id, now_us(), Actor.cli())
    answer = served.call(soon, REQUESTS["read acme"])
    assert answer.status_code == 401 and answer.headers["WWW-Authenticate"].startswith("Bearer")


def session(served: Served, email: str) -> tuple[requests.Session, str]:
    """A logged-in browser session and the Tokens page's anti-forgery token."""
    answer = password_login(served.server, email)
    assert answer.status_code == 303, answer.text
    browser: requests.Session = answer.session  # type: ignore[attr-defined]
    return browser, xsrf_of(browser.get(served.server.base + "/tokens", timeout=10).text)


def test_the_tokens_page_makes_lists_and_revokes(served: Served) -> None:
    base = served.server.base
    browser, xsrf = session(served, "member@example.com")
    made = browser.post(base + "/tokens", timeout=10, data={
        "_xsrf": xsrf, "name": "<b>ci</b>", "kind": "personal", "scope": ["read", "releases"],
        "project": "acme", "expires_days": "30"})
    assert made.status_code == 200, made.text
    secret = re.search(r'id="new-token">(snd_[A-Za-z0-9_-]{43})<', made.text).group(1)  # type: ignore
    assert "<b>ci</b>" not in made.text and "&lt;b&gt;ci&lt;/b&gt;" in made.text
    assert served.call(secret, REQUESTS["read acme"]).status_code == OK
    listed = browser.get(base + "/tokens", timeout=10).text
    assert secret not in listed  # shown once
    token_id = re.search(r"Token id (\d+)", made.text).group(1)  # type: ignore[union-attr]
    row = re.search(f'<tr data-token-id="{token_id}">(.*?)</tr>', listed, re.S)
    assert row is not None
    cells = row.group(1)
    assert "read releases" in cells and "acme" in cells and "just now" in cells  # last use
    # Another account sees none of it, and may not revoke it or make service tokens.
    other, other_xsrf = session(served, "viewer@example.com")
    assert f'data-token-id="{token_id}"' not in other.get(base + "/tokens", timeout=10).text
    assert other.post(f"{base}/tokens/{token_id}/revoke", timeout=10,
                      data={"_xsrf": other_xsrf}).status_code == NOT_FOUND
    assert other.post(base + "/tokens", timeout=10, data={
        "_xsrf": other_xsrf, "name": "svc", "kind": "service", "scope": "read"}
    ).status_code == REFUSED
    bad = browser.post(base + "/tokens", timeout=10, data={
        "_xsrf": xsrf, "name": "x", "scope": "read", "project": "nope"})
    assert bad.status_code == 400 and "no project named &#x27;nope&#x27;" in bad.text
    # An admin sees every token, and makes service tokens.
    admin, admin_xsrf = session(served, "admin@example.com")
    assert f'data-token-id="{token_id}"' in admin.get(base + "/tokens", timeout=10).text
    service = admin.post(base + "/tokens", timeout=10, data={
        "_xsrf": admin_xsrf, "name": "svc", "kind": "service", "scope": "project-admin"})
    assert service.status_code == 200 and 'id="new-token">snd_' in service.text
    revoked = browser.post(f"{base}/tokens/{token_id}/revoke", timeout=10,
                           allow_redirects=False, data={"_xsrf": xsrf})
    assert revoked.status_code == 303 and revoked.headers["Location"] == "/tokens?done=revoked"
    assert served.call(secret, REQUESTS["read acme"]).status_code == 401
    assert 'class="state">revoked<' in browser.get(base + "/tokens", timeout=10).text


def stored_bytes(db_url: str) -> bytes:
    """Everything the store holds: the SQLite file and its log, or a PostgreSQL dump."""
    if db_url.startswith("sqlite"):
        path = Path(db_url.removeprefix("sqlite:///"))
        return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())
    return subprocess.run(["pg_dump", "--data-only", db_url.replace("+psycopg", "")],
                          capture_output=True, check=True).stdout


def test_no_token_is_kept_in_plain_text(served: Served) -> None:
    secret = served.token("read")
    assert served.call(secret, REQUESTS["read acme"]).status_code == OK
    stored = stored_bytes(served.server.db_url)
    assert secret.encode() not in stored and secret[4:].encode() not in stored
    assert tokens.token_hash(secret).encode() in stored  # the grep can find what is there


def project_routes() -> list[tuple[str, str]]:
    """(method, path in project beta) of every route under a project, from the route
    table: a new one is covered without a line here."""
    routes = Dashboard(None, {}).routes()  # type: ignore[arg-type]  # routes need no store
    out = []
    for pattern, handler, *_ in routes:
        if not re.match(r"(/api/v1)?/projects/\(\[\^/\]\+\)", pattern):
            continue
        path = re.sub(r"\(\[\^/\]\+\)", "beta", pattern, count=1)
        path = (path.replace("([0-9]+)", "1").replace("([0-9a-fA-F]{1,32})", "ab" * 16)
                .replace("([0-9a-fA-F]{32})", "ab" * 16).replace("(.+)", "x")
                .replace("([^/]+)", "x"))
        assert "(" not in path, f"add a sample value for {pattern}"
        out += [(m.upper(), path) for m in ("get", "post")
                if any(m in vars(c) for c in handler.__mro__
                       if c.__module__.startswith("dashboard."))]
    return out


def test_no_route_lets_a_token_past_its_projects(served: Served) -> None:
    secret = served.token("admin", projects=("acme",))
    headers = {"Authorization": f"Bearer {secret}"}
    routes = project_routes()
    assert len(routes) >= 30
    for method, path in routes:
        answer = requests.request(method, served.server.base + path, headers=headers,
                                  data={"project": "beta"}, timeout=10,
                                  allow_redirects=False)
        assert answer.status_code in (403, 404), (method, path, answer.status_code)
    # The same requests reach acme (the check above can fail).
    reached = requests.get(served.server.base + "/projects/acme/errors", headers=headers,
                           timeout=10)
    assert reached.status_code == 200
