"""Roles in single projects, on the real collector (SQLite and PostgreSQL) and the real
OpenID provider (tests/js/oidc_provider.mjs): a group mapped to a project gives a role
there only, a changed group re-maps it at the next login, a member of one project
cannot change another's error groups, a personal token is held to the same role in
each project, and an admin sets a project role by hand on the Users page and with
`sounding users set-role --project`, each change on the audit log."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from dashboard.oidc_settings import check
from model.errors import ConfigError
from model.timeutil import now_us
from storage.accounts import tokens, users
from storage.audit.log import Actor
from storage.store import Store
from tests.dashboard.data import ADMIN_TOKEN, error, post_ok
from tests.dashboard.test_audit import mark, since
from tests.dashboard.test_sessions import xsrf_of
from tests.dashboard.test_sso import logged_in, sso_login
from tests.support import clients
from tests.support.oidc_provider import IdP
from tests.support.server import REPO, Server, collectors

pytestmark = pytest.mark.clients(clients.OIDC_PROVIDER)

KEYS = {"acme": "roles-key-acme", "beta": "roles-key-beta"}
PROVIDER = ("system", "oidc:corp", "identity provider corp")
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


class Served:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.group: dict[str, int] = {}

    def roles(self, email: str) -> tuple[str, dict[str, str]]:
        """(global role, {project: role}) as stored."""
        role = self.server.query("SELECT role FROM users WHERE email = :e", e=email)[0][0]
        rows = self.server.query(
            "SELECT p.name, r.role FROM user_project_roles r JOIN projects p "
            "ON p.id = r.project_id JOIN users u ON u.id = r.user_id WHERE u.email = :e",
            e=email)
        return role, dict(rows)

    def set_status(self, project: str, headers: dict[str, str],
                   browser: requests.Session | None = None) -> requests.Response:
        """Reopen the project's error group (a member's change) through the read API."""
        return (browser or requests).post(  # type: ignore[no-any-return]
            f"{self.server.base}/api/v1/projects/{project}/error-groups/"
            f"{self.group[project]}/status", json={"status": "open"}, headers=headers,
            timeout=10)


@pytest.fixture(scope="module")
def served(module_db_url: str, idp: IdP, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("project-roles")
    (folder / "sounding.yaml").write_text(idp.sounding_config())
    with collectors(folder) as start:
        server = start(module_db_url, keys=KEYS, config=str(folder / "sounding.yaml"),
                       env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
        idp.register(server)
        out = Served(server)
        for project, key in KEYS.items():
            post_ok(server, "/ingest/errors/batch", {"errors": [error(f"roles-{project}")]},
                    key=key)
            listed = requests.get(f"{server.base}/api/v1/projects/{project}/error-groups",
                                  headers=ADMIN, timeout=10).json()["items"]
            out.group[project] = listed[0]["group"]["id"]
        yield out


def session_headers(served: Served, browser: requests.Session) -> dict[str, str]:
    page = browser.get(served.server.base + "/account", timeout=10)
    return {"X-XSRFToken": xsrf_of(page.text)}


def project_names(served: Served, browser: requests.Session) -> list[str]:
    listed = browser.get(served.server.base + "/api/v1/projects", timeout=10).json()
    return sorted(p["name"] for p in listed["projects"])


def test_a_project_group_gives_a_role_in_that_project_only(served: Served, idp: IdP) -> None:
    idp.control("account", id="fay", groups=["acme-devs"])
    start = mark(served.server)
    fay = logged_in(served.server, "fay")
    assert served.roles("fay@example.com") == ("none", {"acme": "member"})
    # No global role: beta is not there for fay, in lists nor by name.
    assert project_names(served, fay) == ["acme"]
    assert fay.get(served.server.base + "/api/v1/projects/beta/error-groups",
                   timeout=10).status_code == 404
    assert fay.get(served.server.base + "/projects/beta/errors", timeout=10).status_code == 404
    assert fay.get(served.server.base + "/projects/acme/errors", timeout=10).status_code == 200
    headers = session_headers(served, fay)
    assert served.set_status("acme", headers, fay).status_code == 200
    assert served.set_status("beta", headers, fay).status_code == 404
    entries = [e for e in since(served.server, start) if e["action"].startswith("user.")]
    assert [e["action"] for e in entries] == ["user.create", "user.role"]
    assert entries[1] == {
        "actor": PROVIDER, "action": "user.role", "target": ("user", "fay@example.com", None),
        "before": {"role": "none", "projects": {}},
        "after": {"role": "none", "projects": {"acme": "member"}}}


def test_a_member_of_one_project_cannot_change_anothers_groups(served: Served,
                                                                idp: IdP) -> None:
    idp.control("account", id="gus", groups=["acme-devs", "sounding-viewers"])
    gus = logged_in(served.server, "gus")
    assert served.roles("gus@example.com") == ("viewer", {"acme": "member"})
    assert project_names(served, gus) == ["acme", "beta"]  # a viewer of every project
    headers = session_headers(served, gus)
    refused = served.set_status("beta", headers, gus)
    assert refused.status_code == 403, refused.text
    assert "needs the member role in this project" in refused.text
    assert served.set_status("acme", headers, gus).status_code == 200
    # The Users page and the Audit page stay an admin's, whatever the project roles.
    assert gus.get(served.server.base + "/users", timeout=10).status_code == 403


def test_a_changed_group_re_maps_the_project_roles_at_the_next_login(
        served: Served, idp: IdP) -> None:
    idp.control("account", id="fay", groups=["acme-devs"])
    fay = sso_login(served.server, "fay").browser  # type: ignore[attr-defined]
    assert served.roles("fay@example.com") == ("none", {"acme": "member"})
    idp.control("account", id="fay", groups=["beta-leads"])
    assert served.roles("fay@example.com") == ("none", {"acme": "member"})  # not yet
    start = mark(served.server)
    again = sso_login(served.server, None, browser=fay)
    assert again.url == f"{served.server.base}/account"
    assert served.roles("fay@example.com") == ("none", {"acme": "viewer", "beta": "admin"})
    assert since(served.server, start) == [{
        "actor": PROVIDER, "action": "user.role", "target": ("user", "fay@example.com", None),
        "before": {"role": "none", "projects": {"acme": "member"}},
        "after": {"role": "none", "projects": {"acme": "viewer", "beta": "admin"}}}]
    headers = session_headers(served, fay)
    assert served.set_status("acme", headers, fay).status_code == 403
    assert served.set_status("beta", headers, fay).status_code == 200
    start = mark(served.server)
    assert sso_login(served.server, None, browser=fay).url == f"{served.server.base}/account"
    assert since(served.server, start) == []  # the same roles: nothing to record


def test_an_admin_of_one_project_makes_keys_there_only(served: Served, idp: IdP) -> None:
    idp.control("account", id="fay", groups=["beta-leads"])  # admin of beta, viewer of acme
    fay = sso_login(served.server, "fay").browser  # type: ignore[attr-defined]
    assert served.roles("fay@example.com") == ("none", {"acme": "viewer", "beta": "admin"})
    xsrf = session_headers(served, fay)["X-XSRFToken"]

    def setup(project: str) -> requests.Response:
        return fay.post(served.server.base + "/setup", data={"_xsrf": xsrf, "project": project},
                        timeout=10)

    keys = "SELECT count(*) FROM api_keys"
    before = served.server.query(keys)[0][0]
    assert setup("beta").status_code == 200
    assert served.server.query(keys)[0][0] == before + 1
    refused = setup("acme")
    assert refused.status_code == 403 and "admin role in this project" in refused.text
    # A new project is beyond any one project: the global admin role, which fay has not.
    assert setup("gamma").status_code == 403
    assert served.server.query(keys)[0][0] == before + 1
    assert served.server.query("SELECT count(*) FROM projects WHERE name = 'gamma'")[0][0] == 0


def sounding(db_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    return subprocess.run([sys.executable, "-m", "sounding", *args], cwd=REPO, text=True,
                          capture_output=True, timeout=60,
                          env={**env, "SOUNDING_DATABASE_URL": db_url})


def test_a_personal_token_is_held_to_its_accounts_role_in_each_project(
        served: Served, idp: IdP) -> None:
    idp.control("account", id="gus", groups=["acme-devs", "sounding-viewers"])
    logged_in(served.server, "gus")
    store = Store(served.server.db_url)
    try:
        gus = users.find(store, "gus@example.com")
        assert gus is not None
        secret, _ = tokens.create(store, "gus's script", ["admin"], now_us(), Actor.cli(),
                                  gus.id)
    finally:
        store.dispose()
    bearer = {"Authorization": f"Bearer {secret}"}
    assert served.set_status("acme", bearer).status_code == 200
    refused = served.set_status("beta", bearer)
    assert refused.status_code == 403 and "member role in this project" in refused.text
    # An admin gives gus member on beta by hand, on the command line: the token follows.
    start = mark(served.server)
    done = sounding(served.server.db_url, "users", "set-role", "--email", "gus@example.com",
                    "--role", "member", "--project", "beta")
    assert done.returncode == 0 and "role member in beta" in done.stdout, done.stderr
    assert served.set_status("beta", bearer).status_code == 200
    listed = sounding(served.server.db_url, "users", "list").stdout.splitlines()
    assert [line.split()[-2:] for line in listed if line.startswith("gus@")] == [
        ["acme:member", "beta:member"]]
    entries = since(served.server, start)
    assert entries[0]["actor"][0] == "cli"
    assert {k: v for k, v in entries[0].items() if k != "actor"} == {
        "action": "user.role", "target": ("user", "gus@example.com", None),
        "before": {"projects": {"acme": "member"}},
        "after": {"projects": {"acme": "member", "beta": "member"}}}
    unknown = sounding(served.server.db_url, "users", "set-role", "--email",
                       "gus@example.com", "--role", "member", "--project", "nope")
    assert unknown.returncode == 2 and "no project named 'nope'" in unknown.stderr


def test_an_admin_sets_a_project_role_on_the_users_page(served: Served) -> None:
    store = Store(served.server.db_url)
    try:
        users.create(store, "hal@example.com", "correct horse battery", "none", now_us())
    finally:
        store.dispose()
    start = mark(served.server)
    base = served.server.base
    answer = requests.post(base + "/users", headers=ADMIN, timeout=10, allow_redirects=False,
                           data={"action": "set-project-role", "email": "hal@example.com",
                                 "project": "beta", "role": "member"})
    assert answer.status_code == 303, answer.text
    assert served.roles("hal@example.com") == ("none", {"beta": "member"})
    page = requests.get(base + "/users", headers=ADMIN, timeout=10).text
    assert "beta: member" in page
    bad = requests.post(base + "/users", headers=ADMIN, timeout=10,
                        data={"action": "set-project-role", "email": "hal@example.com",
                              "project": "beta", "role": "owner"})
    assert bad.status_code == 400 and "a project role must be one of" in bad.text
    requests.post(base + "/users", headers=ADMIN, timeout=10, allow_redirects=False,
                  data={"action": "set-project-role", "email": "hal@example.com",
                        "project": "beta", "role": "none"})
    assert served.roles("hal@example.com") == ("none", {})
    assert [(e["actor"][:2], e["before"], e["after"]) for e in since(served.server, start)] == [
        (("token", "admin"), {"projects": {}}, {"projects": {"beta": "member"}}),
        (("token", "admin"), {"projects": {"beta": "member"}}, {"projects": {}})]


@pytest.mark.parametrize(("role_map", "says"), [
    ({"devs": {"project": "acme"}}, "must be a role (viewer, member, admin), {project"),
    ({"devs": {"project": "acme", "role": "owner"}}, ".role must be one of viewer, member"),
    ({"devs": {"project": "", "role": "member"}}, ".project must be a project's name"),
    ({"devs": "none"}, "must be one of viewer, member, admin (across all projects)"),
    ({"devs": [{"project": "acme", "role": "member"}, 3]}, "not 3"),
])
def test_a_bad_role_map_is_refused_at_start(role_map: dict, says: str) -> None:
    provider = {"name": "corp", "issuer": "https://idp.example.com", "client_id": "c",
                "client_secret": "s", "role_map": role_map}
    with pytest.raises(ConfigError, match="role_map") as refused:
        check("dashboard.oidc", {"providers": [provider]})
    assert says in str(refused.value)


def test_a_role_map_names_projects_and_the_highest_role_wins(tmp_path: Path) -> None:
    from dashboard.oidc_settings import providers
    (corp,) = providers({"oidc": {"providers": [{
        "name": "corp", "issuer": "https://idp.example.com", "client_id": "c",
        "client_secret": "s", "role_map": {
            "sre": "admin", "acme-devs": {"project": "acme", "role": "member"},
            "leads": [{"project": "acme", "role": "admin"}, "viewer"]}}]}})
    mapped = corp.role_of({"groups": ["acme-devs"]})
    assert mapped is not None and (mapped.role, mapped.projects) == ("none", {"acme": "member"})
    mapped = corp.role_of({"groups": ["acme-devs", "leads"]})
    assert mapped is not None and (mapped.role, mapped.projects) == ("viewer", {"acme": "admin"})
    assert corp.role_of({"groups": ["interns"]}) is None
