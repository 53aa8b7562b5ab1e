"""The real Sentry Python SDK end to end: a collector with the read API on, the SDK's
scenarios (sdk_app.py, sdk_scenarios.py) sent to it or recorded on the way, and the
read API's answers."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.helpers import KEY, dsn, project_id, start_sentry
from tests.receiver.sentry.test_sdk import run_app
from tests.receiver.sentry.test_sentry_node import envelope_items
from tests.support.recorder import Recorded, recording
from tests.support.server import Server

API = "/api/v1/projects/acme"


def start_with_api(start: Callable[..., Server], db_url: str | None = None) -> Server:
    return start_sentry(start, db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})


def api(server: Server, path: str, **params: str) -> Any:
    response = requests.get(server.base + API + path, params=params, timeout=10,
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 200, response.text
    return response.json()


def group_of(server: Server, fingerprint: str) -> dict[str, Any]:
    """The group page's document (its latest event, facets, first release)."""
    listed = api(server, "/error-groups", status="all")["items"]
    [group_id] = [item["group"]["id"] for item in listed
                  if item["group"]["fingerprint"] == fingerprint]
    return api(server, f"/error-groups/{group_id}")  # type: ignore[no-any-return]


def send(server: Server, scenario: str, env: dict[str, str] | None = None
         ) -> dict[str, Any]:
    """The scenario's SDK pointed at `server`; what sdk_app.py printed. Every envelope
    was answered before the SDK's flush returned, so what it sent is committed."""
    result = run_app(dsn(server), scenario, env=env)
    assert not [line for line in result["log"] if line.startswith("ERROR")], result["log"]
    return result


def record(server: Server, scenario: str) -> tuple[dict[str, Any], list[Recorded]]:
    """The scenario's SDK pointed at a listener that records its requests, with the
    DSN's project id that of `server`'s project acme: the envelopes as the SDK's
    transport sent them, for a test to send (again) to Sounding."""
    with recording() as recorder:
        url = recorder.url.replace("http://", f"http://{KEY}@") + f"/{project_id(server)}"
        result = run_app(url, scenario)
    return result, recorder.requests


def events_of(sent: list[Recorded]) -> list[tuple[Recorded, dict[str, Any]]]:
    """Each recorded request that carries an event, with the event."""
    return [(request, payload) for request in sent
            for header, payload in envelope_items(request.body) if header["type"] == "event"]


def replay(server: Server, request: Recorded) -> requests.Response:
    """The recorded request, byte for byte with its headers, sent to `server`: what
    the SDK's transport sends when it tries again."""
    # The recorder inflated the body: it goes as it is, without its encoding.
    headers = {name: value for name, value in request.headers.items()
               if name.lower() not in ("host", "content-length", "content-encoding")}
    return requests.post(server.base + request.path, data=request.body, headers=headers,
                         timeout=30)


def wait_for(check: Callable[[], Any], what: str, timeout: float = 10) -> Any:
    """Polls `check` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never happened (last: {got!r})")
        time.sleep(0.05)
