"""The audit log through the real server, on SQLite and PostgreSQL: every audited
action of the dashboard, its read API and the command line writes exactly one record
(one per group for a bulk change) with the right actor, action, target, before and
after, and none when nothing changed; credentials never reach it; the Audit page and
GET /api/v1/audit show the records newest first, escaped, filtered and paged, to
admins only.

One collector per database serves the module; each test takes the records written
since its own mark, and uses groups, accounts and projects of its own."""

from __future__ import annotations

import getpass
import html
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.dashboard.test_roles import PASSWORD, create_user, password_login
from tests.dashboard.test_sessions import xsrf_of
from tests.support.server import REPO, Server, collectors

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
ADMIN = ("token", "admin", "admin token")
SECRETS_KEY = "audit-secrets-key-0123456789abcdefXYZ"
HOOK_URL = "http://127.0.0.1:9/hooks/AUDITPATHSECRET?token=AUDITQUERYSECRET"
HOOK_SECRET = "whsec-AUDITWEBHOOKSECRET"
CLI = ("cli", getpass.getuser(), f"{getpass.getuser()}@{socket.gethostname()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, module_db_url: str) -> Iterator[Server]:
    with collectors(tmp_path_factory.mktemp("audit")) as start:
        yield start(module_db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN,
                                        "SOUNDING__ALERTS__SECRETS_KEY": SECRETS_KEY})


# The records.

def mark(server: Server) -> int:
    return int(server.query("SELECT coalesce(max(id), 0) FROM audit_log")[0][0])


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def since(server: Server, start: int) -> list[dict[str, Any]]:
    return [{"actor": (r.actor_kind, r.actor_id, r.actor_name), "action": r.action,
             "target": (r.target_kind, r.target_id, r.project_id),
             "before": _json(r.before), "after": _json(r.after)}
            for r in server.query("SELECT * FROM audit_log WHERE id > :m ORDER BY id", m=start)]


def one(server: Server, start: int) -> dict[str, Any]:
    found = since(server, start)
    assert len(found) == 1, found
    return found[0]


def everything(server: Server) -> str:
    """The whole table as text: no credential may be in it."""
    return repr(server.query("SELECT * FROM audit_log"))


# The things changed.

def project_id(server: Server, name: str = "acme") -> int:
    return int(server.query("SELECT id FROM projects WHERE name = :n", n=name)[0][0])


def groups(server: Server, *fingerprints: str, **labels: str) -> list[int]:
    post_ok(server, "/ingest/errors/batch",
            {"errors": [error(f, exception_class=f"E{f}", **labels) for f in fingerprints]})
    return [int(server.query("SELECT id FROM error_groups WHERE fingerprint = :f", f=f)[0][0])
            for f in fingerprints]


def user_id(server: Server, email: str) -> str:
    return str(server.query("SELECT id FROM users WHERE email = :e", e=email)[0][0])


def api(server: Server, path: str, body: Any, headers: dict[str, str] | None = None
        ) -> requests.Response:
    return requests.post(f"{server.base}/api/v1/projects/acme/error-groups/{path}", json=body,
                         headers=headers or BEARER, timeout=10)


def form(server: Server, path: str, data: dict[str, Any],
         session: requests.Session | None = None) -> requests.Response:
    """A form POST: with a session, carrying its anti-forgery token; else the admin
    token as a bearer."""
    if session is None:
        return requests.post(server.base + path, data=data, headers=BEARER, timeout=10,
                             allow_redirects=False)
    token = xsrf_of(session.get(server.base + "/account", timeout=10).text)
    return session.post(server.base + path, data={**data, "_xsrf": token}, timeout=10,
                        allow_redirects=False)


def account(server: Server, email: str, role: str) -> requests.Session:
    create_user(server.db_url, email, role)
    answer = password_login(server, email)
    assert answer.status_code == 303, answer.text
    return answer.session  # type: ignore[attr-defined, no-any-return]


def cli(server: Server, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    done = subprocess.run([sys.executable, "-m", "sounding", *args], cwd=REPO, text=True,
                          capture_output=True, timeout=60,
                          env={**env, "SOUNDING_DATABASE_URL": server.db_url})
    assert done.returncode == 0, done.stderr
    return done.stdout


# Every audited action.

def test_status_changes_resolves_and_snoozes(server: Server) -> None:
    a, b, c = groups(server, "st-a", "st-b", "st-c", release="1.0")
    p = project_id(server)
    start = mark(server)
    assert api(server, f"{a}/status", {"status": "resolved", "next_release": True}).ok
    assert one(server, start) == {
        "actor": ADMIN, "action": "group.resolve", "target": ("group", str(a), p),
        "before": {"status": "open"},
        "after": {"status": "resolved", "next_release": True, "resolved_release": "1.0"}}
    start = mark(server)
    assert api(server, f"{a}/status", {"status": "resolved"}).ok
    assert since(server, start) == []  # resolved already: no change, no record
    assert api(server, f"{a}/status", {"status": "open"}).ok
    assert one(server, start)["action"] == "group.reopen"
    assert one(server, start)["before"] == {"status": "resolved"}
    start = mark(server)
    assert api(server, f"{a}/status", {"status": "ignored"}).ok
    assert (one(server, start)["action"], one(server, start)["after"]) == (
        "group.ignore", {"status": "ignored"})
    start = mark(server)
    assert api(server, f"{b}/status", {"status": "ignored", "snooze": {"events": 5}}).ok
    assert one(server, start) == {
        "actor": ADMIN, "action": "group.snooze", "target": ("group", str(b), p),
        "before": {"status": "open"},
        "after": {"status": "ignored",
                  "snooze": {"until_us": None, "events": 5, "per_hour": None}}}

    member = account(server, "st-member@example.com", "member")
    start = mark(server)
    done = form(server, f"/projects/acme/errors/{c}/status", {"status": "resolved"}, member)
    assert done.status_code == 303, done.text
    assert one(server, start) == {
        "actor": ("user", user_id(server, "st-member@example.com"), "st-member@example.com"),
        "action": "group.resolve", "target": ("group", str(c), p),
        "before": {"status": "open"},
        "after": {"status": "resolved", "next_release": False, "resolved_release": None}}

    start = mark(server)  # a bulk change: one record per group that changed
    bulk = api(server, "bulk-status", {"groups": [a, b, c], "status": "open"})
    assert bulk.json() == {"changed": 3}
    found = since(server, start)
    assert [(r["action"], r["target"], r["before"]) for r in found] == [
        ("group.reopen", ("group", str(a), p), {"status": "ignored"}),
        ("group.reopen", ("group", str(b), p), {"status": "ignored"}),
        ("group.reopen", ("group", str(c), p), {"status": "resolved"})]
    assert {r["actor"] for r in found} == {ADMIN}


def test_merge_and_unmerge(server: Server) -> None:
    a, b, c = groups(server, "mg-a", "mg-b", "mg-c")
    p = project_id(server)
    start = mark(server)
    assert api(server, "merge", {"into": a, "groups": [a, b, c]}).ok
    assert one(server, start) == {
        "actor": ADMIN, "action": "group.merge", "target": ("group", str(a), p),
        "before": {"merged_into": {str(b): None, str(c): None}}, "after": {"groups": [b, c]}}
    start = mark(server)
    assert api(server, f"{b}/unmerge", None).ok
    assert one(server, start) == {
        "actor": ADMIN, "action": "group.unmerge", "target": ("group", str(b), p),
        "before": {"merged_into": a}, "after": {"merged_into": None}}


def test_alert_destinations_and_rules_without_their_credentials(server: Server) -> None:
    p = project_id(server)
    admin = account(server, "al-admin@example.com", "admin")
    actor = ("user", user_id(server, "al-admin@example.com"), "al-admin@example.com")
    alerts = "/projects/acme/alerts"
    start = mark(server)
    added = form(server, alerts + "/destinations", {
        "name": "audit-hook", "type": "webhook", "url": HOOK_URL, "secret": HOOK_SECRET}, admin)
    assert added.status_code == 303, added.text
    dest = str(server.query("SELECT id FROM alert_destinations WHERE name = 'audit-hook'")[0][0])
    created = one(server, start)
    assert (created["actor"], created["action"], created["target"], created["before"]) == (
        actor, "destination.create", ("destination", dest, p), None)
    assert created["after"]["name"] == "audit-hook" and created["after"]["type"] == "webhook"
    assert created["after"]["config"]["url"] == "[redacted]"
    start = mark(server)
    assert form(server, alerts + "/rules", {"on": "frequency", "count": "3", "minutes": "5",
                                            "env": "prod", "destinations": "audit-hook"},
                admin).status_code == 303
    rule = str(server.query("SELECT max(id) FROM alert_rules")[0][0])
    stored = {"on": "frequency", "destinations": ["audit-hook"], "env": "prod", "count": 3,
              "minutes": 5}
    assert one(server, start) == {"actor": actor, "action": "alert_rule.create",
                                  "target": ("alert_rule", rule, p), "before": None,
                                  "after": stored}
    start = mark(server)
    assert form(server, f"{alerts}/rules/{rule}/remove", {}, admin).status_code == 303
    assert one(server, start) == {"actor": actor, "action": "alert_rule.delete",
                                  "target": ("alert_rule", rule, p), "before": stored,
                                  "after": None}
    start = mark(server)
    assert form(server, f"{alerts}/destinations/{dest}/remove", {}).status_code == 303
    removed = one(server, start)
    assert (removed["actor"], removed["action"], removed["target"], removed["after"]) == (
        ADMIN, "destination.delete", ("destination", dest, p), None)
    assert removed["before"]["name"] == "audit-hook"
    for secret in ("AUDITPATHSECRET", "AUDITQUERYSECRET", HOOK_SECRET):
        assert secret not in everything(server)


def test_accounts_and_roles(server: Server) -> None:
    email = "acc-bo@example.com"
    start = mark(server)
    assert form(server, "/users", {"action": "create", "email": email, "password": PASSWORD,
                                   "role": "member"}).status_code == 303
    assert one(server, start) == {"actor": ADMIN, "action": "user.create",
                                  "target": ("user", email, None), "before": None,
                                  "after": {"email": email, "role": "member"}}
    start = mark(server)
    assert form(server, "/users", {"action": "set-role", "email": email,
                                   "role": "admin"}).status_code == 303
    assert one(server, start) == {"actor": ADMIN, "action": "user.role",
                                  "target": ("user", email, None),
                                  "before": {"role": "member"}, "after": {"role": "admin"}}
    start = mark(server)
    assert form(server, "/users", {"action": "set-role", "email": email,
                                   "role": "admin"}).status_code == 303
    assert since(server, start) == []  # the role it had: no change

    bo = password_login(server, email).session  # type: ignore[attr-defined]
    start = mark(server)
    changed = form(server, "/account/password", {"current": PASSWORD,
                                                 "new": "an audited new password"}, bo)
    assert changed.status_code == 303, changed.text
    assert one(server, start) == {"actor": ("user", user_id(server, email), email),
                                  "action": "user.password", "target": ("user", email, None),
                                  "before": None, "after": None}
    for action, code in (("disable", "user.disable"), ("enable", "user.enable")):
        start = mark(server)
        assert form(server, "/users", {"action": action, "email": email}).status_code == 303
        record = one(server, start)
        assert (record["actor"], record["action"], record["target"]) == (
            ADMIN, code, ("user", email, None))
    start = mark(server)
    assert form(server, "/users", {"action": "delete", "email": email}).status_code == 303
    assert one(server, start) == {"actor": ADMIN, "action": "user.delete",
                                  "target": ("user", email, None),
                                  "before": {"email": email, "role": "admin"}, "after": None}
    for secret in (PASSWORD, "an audited new password", "argon2"):
        assert secret not in everything(server)


def test_the_setup_page_records_the_project_and_the_key_it_made(server: Server) -> None:
    start = mark(server)
    made = form(server, "/setup", {"project": "setup-made"})
    assert made.status_code == 200, made.text
    key = re.search(r"://([0-9a-f]{32})@", made.text)
    assert key is not None
    p = project_id(server, "setup-made")
    key_id = str(server.query("SELECT key_id FROM api_keys WHERE project_id = :p", p=p)[0][0])
    assert since(server, start) == [
        {"actor": ADMIN, "action": "project.create", "target": ("project", str(p), p),
         "before": None, "after": {"name": "setup-made"}},
        {"actor": ADMIN, "action": "key.create", "target": ("key", key_id, p),
         "before": None, "after": {"project": "setup-made"}}]
    start = mark(server)
    assert form(server, "/setup", {"project": "setup-made"}).status_code == 200
    assert [r["action"] for r in since(server, start)] == ["key.create"]  # project known
    assert key.group(1) not in everything(server)


def test_the_command_line_is_recorded_as_its_user(server: Server) -> None:
    start = mark(server)
    create_user(server.db_url, "cli-cy@example.com", "viewer")
    assert one(server, start) == {"actor": CLI, "action": "user.create",
                                  "target": ("user", "cli-cy@example.com", None),
                                  "before": None,
                                  "after": {"email": "cli-cy@example.com", "role": "viewer"}}
    start = mark(server)
    cli(server, "users", "set-role", "--email", "cli-cy@example.com", "--role", "member")
    assert (one(server, start)["actor"], one(server, start)["action"]) == (CLI, "user.role")
    start = mark(server)
    cli(server, "projects", "create", "cli-made")
    p = project_id(server, "cli-made")
    assert one(server, start) == {"actor": CLI, "action": "project.create",
                                  "target": ("project", str(p), p), "before": None,
                                  "after": {"name": "cli-made"}}
    start = mark(server)
    printed = cli(server, "keys", "create", "--project", "cli-made")
    key_id = re.search(r"key id:\s+(\S+)", printed).group(1)  # type: ignore[union-attr]
    key = re.search(r"key:\s+(\S+)", printed).group(1)  # type: ignore[union-attr]
    assert one(server, start) == {"actor": CLI, "action": "key.create",
                                  "target": ("key", key_id, p), "before": None,
                                  "after": {"project": "cli-made"}}
    start = mark(server)
    rotated = cli(server, "keys", "rotate", "--project", "cli-made", "--revoke-old")
    new_id = re.search(r"key id:\s+(\S+)", rotated).group(1)  # type: ignore[union-attr]
    record = one(server, start)
    assert (record["actor"], record["action"], record["target"]) == (
        CLI, "key.rotate", ("key", new_id, p))
    assert record["after"]["older_keys"] == [key_id]
    start = mark(server)
    cli(server, "keys", "revoke", new_id)
    record = one(server, start)
    assert (record["actor"], record["action"], record["target"]) == (
        CLI, "key.revoke", ("key", new_id, p))
    start = mark(server)
    token = re.search(r"admin token:\s+(\S+)", cli(server, "admin-token", "rotate"))
    assert one(server, start) == {"actor": CLI, "action": "admin_token.rotate",
                                  "target": ("admin_token", None, None), "before": None,
                                  "after": None}
    assert key not in everything(server) and token.group(1) not in everything(server)  # type: ignore[union-attr]


# The page and the API.

def test_the_page_and_the_api_show_records_escaped_filtered_and_paged(server: Server) -> None:
    assert form(server, "/setup", {"project": XSS}).status_code == 200
    xss = project_id(server, XSS)
    page = requests.get(server.base + "/audit", headers=BEARER, timeout=10)
    assert page.status_code == 200
    assert XSS not in page.text and html.escape(XSS, quote=False) in page.text
    actions = re.findall(r'data-action="([^"]+)"', page.text)
    assert actions[:2] == ["key.create", "project.create"]  # newest first
    only = requests.get(server.base + "/audit", headers=BEARER, timeout=10,
                        params={"project": XSS, "action": "project.create"}).text
    assert re.findall(r'data-action="([^"]+)"', only) == ["project.create"]

    fingerprints = [f"pg-{i}" for i in range(30)]
    ids = groups(server, *fingerprints)
    start = mark(server)
    for status in ("resolved", "open"):
        assert api(server, "bulk-status", {"groups": ids, "status": status}).json() == {
            "changed": 30}
    assert len(since(server, start)) == 60
    first = requests.get(server.base + "/audit", headers=BEARER, timeout=10,
                         params={"project": "acme", "action": "group"}).text
    assert len(re.findall(r'data-action="group\.', first)) == 50 and "Older →" in first
    second = requests.get(server.base + "/audit", headers=BEARER, timeout=10,
                          params={"project": "acme", "action": "group", "page": "2"}).text
    assert "← Newer" in second and len(re.findall(r'data-action="group\.', second)) >= 10

    listed = requests.get(server.base + "/api/v1/audit", headers=BEARER, timeout=10,
                          params={"project": XSS, "limit": "1"}).json()
    assert listed["page"] == 1 and listed["next_page"] == 2
    (entry,) = listed["entries"]
    assert {k: entry[k] for k in ("actor_kind", "actor_id", "actor_name", "action",
                                  "target_kind", "project_id", "project", "before")} == {
        "actor_kind": "token", "actor_id": "admin", "actor_name": "admin token",
        "action": "key.create", "target_kind": "key", "project_id": xss, "project": XSS,
        "before": None}
    by_actor = requests.get(server.base + "/api/v1/audit", headers=BEARER, timeout=10,
                            params={"actor": "admin token", "action": "group.reopen",
                                    "limit": "500"}).json()["entries"]
    assert len(by_actor) >= 30 and {e["action"] for e in by_actor} == {"group.reopen"}
    for params, says in (({"action": "group.delete"}, "'action' must be"),
                         ({"project": "no such"}, "no project named"),
                         ({"page": "0"}, "'page' must be"), ({"limit": "501"}, "'limit'"),
                         ({"actor": "x" * 321}, "'actor' must be")):
        bad = requests.get(server.base + "/api/v1/audit", headers=BEARER, timeout=10,
                           params=params)
        assert bad.status_code == 400 and says in bad.json()["error"], params


def test_only_admins_read_the_audit_log(server: Server) -> None:
    for role in ("viewer", "member"):
        session = account(server, f"ro-{role}@example.com", role)
        for path in ("/audit", "/api/v1/audit"):
            assert session.get(server.base + path, timeout=10).status_code == 403, (role, path)
        assert 'href="/audit"' not in session.get(server.base + "/account", timeout=10).text
    admin = account(server, "ro-admin@example.com", "admin")
    assert admin.get(server.base + "/audit", timeout=10).status_code == 200
    assert 'href="/audit"' in admin.get(server.base + "/account", timeout=10).text
    anonymous = requests.get(server.base + "/audit", timeout=10, allow_redirects=False)
    assert anonymous.status_code == 302 and "/login" in anonymous.headers["Location"]
    assert requests.get(server.base + "/api/v1/audit", timeout=10).status_code == 401
