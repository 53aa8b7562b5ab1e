"""A collector with Sentry-style (DSN-safe) keys, and requests to its Sentry door."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import requests

from tests.support.server import Server

# 32 hex characters, as Sentry issues them; the default test key (with `-`) is not
# DSN-safe.
KEY = "0123456789abcdef0123456789abcdef"
OTHER_KEY = "fedcba9876543210fedcba9876543210"
KEYS = {"acme": KEY, "other": OTHER_KEY}
ORIGIN = "https://shop.example"


def start_sentry(start: Callable[..., Server], db_url: str | None = None,
                 env: dict[str, str] | None = None) -> Server:
    return start(db_url, keys=KEYS, env={"SOUNDING_CORS_ORIGINS": ORIGIN, **(env or {})})


def project_id(server: Server, name: str = "acme") -> int:
    rows = server.query("SELECT id FROM projects WHERE name = :name", name=name)
    return int(rows[0][0])


def dsn(server: Server, key: str = KEY, project: str = "acme") -> str:
    return server.base.replace("http://", f"http://{key}@") + f"/{project_id(server, project)}"


def auth_header(key: str = KEY) -> dict[str, str]:
    return {"X-Sentry-Auth": f"Sentry sentry_key={key}, sentry_version=7, "
                             "sentry_client=sounding-tests/1.0"}


def post_envelope(server: Server, body: bytes, *, key: str | None = KEY,
                  project: int | None = None, headers: dict[str, str] | None = None,
                  path: str = "envelope", **kwargs: Any) -> requests.Response:
    pid = project_id(server) if project is None else project
    sent = {"Content-Type": "application/x-sentry-envelope",
            **(auth_header(key) if key else {}), **(headers or {})}
    return requests.post(f"{server.base}/api/{pid}/{path}/", data=body, headers=sent,
                         timeout=30, **kwargs)


def sentry_items(server: Server) -> dict[str, float]:
    """sounding_sentry_items_total by type, from /metrics."""
    text = requests.get(server.base + "/metrics", timeout=10).text
    return {kind: float(value) for kind, value in re.findall(
        r'^sounding_sentry_items_total\{type="([^"]+)"\} (\S+)$', text, re.M)}
