"""The dashboard extension, through the real server: on the ingest port by default
(tested everywhere else), on a port of its own, or off for a lean sidecar; and its
settings' checks."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import requests

from dashboard.extension import DEFAULTS, _check
from model.errors import ConfigError
from tests.dashboard.data import ADMIN_TOKEN
from tests.support.server import Server

DASHBOARD = re.compile(r"Sounding dashboard on (http://\S+)")


def _get(url: str, **headers: str) -> requests.Response:
    return requests.get(url, headers=headers, timeout=10, allow_redirects=False)


def test_on_its_own_port_it_serves_there_and_not_on_the_ingest_port(
        start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN, "SOUNDING__DASHBOARD__PORT": "0",
                        "SOUNDING__DASHBOARD__HOST": "127.0.0.1"})
    found = DASHBOARD.search(server.wait_for_log("Sounding dashboard on"))
    assert found is not None, server.log()
    dashboard = found.group(1)
    assert dashboard != server.base
    assert _get(dashboard + "/login").status_code == 200
    projects = _get(dashboard + "/api/v1/projects", Authorization=f"Bearer {ADMIN_TOKEN}")
    assert projects.status_code == 200 and "acme" in projects.text
    assert _get(server.base + "/login").status_code == 404
    assert _get(server.base + "/api/v1/projects",
                Authorization=f"Bearer {ADMIN_TOKEN}").status_code == 404
    # Ingest stays on its port, and only there.
    assert server.post("/ingest/deploys", {"git_sha": "abc"}).status_code == 202
    assert requests.post(dashboard + "/ingest/deploys", json={"git_sha": "abc"},
                         headers=server.headers(), timeout=10).status_code == 404


def test_disabled_it_is_not_built(start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING__DASHBOARD__ENABLED": "false"})
    assert _get(server.base + "/login").status_code == 404
    assert _get(server.base + "/").status_code == 404
    assert _get(server.base + "/health").json()["status"] == "ok"
    assert server.post("/ingest/deploys", {"git_sha": "abc"}).status_code == 202
    assert "admin token" not in server.log()  # none generated: nothing would use it
    assert "Sounding dashboard on" not in server.log()


@pytest.mark.parametrize("value", ["errors.example.com", "https://errors.example.com/ingest",
                                   "http://key@errors.example.com", 3000])
def test_a_public_url_that_is_not_scheme_host_port_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match="public_url must be http"):
        _check("dashboard", {**DEFAULTS, "public_url": value})


def test_a_public_url_of_scheme_host_and_port_is_taken() -> None:
    _check("dashboard", {**DEFAULTS, "public_url": "https://errors.example.com:8443/"})
