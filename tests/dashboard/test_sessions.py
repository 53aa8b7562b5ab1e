"""Several collectors on one PostgreSQL database share the generated admin token and
the key signing sessions: a login made through one is valid on the others, and
rotating the token logs everyone out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable

import pytest
import requests

from tests.support.server import REPO, Server

pytestmark = pytest.mark.postgres

TOKEN = re.compile(r"^\s+(sadm_\S+)$", re.MULTILINE)


def login(server: Server, token: str) -> requests.Session:
    session = requests.Session()
    form = session.get(server.base + "/login", timeout=10).text
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    answer = session.post(server.base + "/login", timeout=10, allow_redirects=False,
                          data={"_xsrf": xsrf, "token": token, "next": "/"})
    assert answer.status_code == 303, answer.text
    return session


def reads(server: Server, session: requests.Session | None = None,
          token: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return (session or requests).get(server.base + "/api/v1/projects", headers=headers,
                                     timeout=10).status_code


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


def test_rotate_refuses_a_configured_token(pg_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    refused = subprocess.run([sys.executable, "-m", "sounding", "admin-token", "rotate"],
                             cwd=REPO, capture_output=True, text=True, timeout=60,
                             env={**env, "SOUNDING_DATABASE_URL": pg_url,
                                  "SOUNDING_ADMIN_TOKEN": "a-configured-admin-token"})
    assert refused.returncode == 2
    assert "configured" in refused.stderr
