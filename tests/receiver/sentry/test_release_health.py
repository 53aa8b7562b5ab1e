"""Release health and user feedback end to end with the real Python sentry-sdk
(health_app.py), on SQLite and PostgreSQL: a WSGI app with `release` set and session
tracking on serves requests, some of which crash; what its SDK sent is recorded and
sent to Sounding, then sent again (a retry); the Releases page, the release API and
the group page show exactly the figures counted by hand from health_app.FIXTURE."""

from __future__ import annotations

import html
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.e2e import api, replay, start_with_api
from tests.receiver.sentry.helpers import KEY, project_id
from tests.receiver.sentry.test_sentry_node import envelope_items
from tests.support import clients
from tests.support.recorder import Recorded, recording
from tests.support.server import Server, collectors

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

HERE = Path(__file__).parent


def run_health_app(url: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTRY", "OTEL_"))}
    env["SENTRY_DSN"] = url
    python = clients.python(clients.SENTRY_SDK_2)
    done = subprocess.run([python, str(HERE / "health_app.py")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def page(server: Server, path: str) -> str:
    response = requests.get(server.base + "/projects/acme" + path, timeout=10,
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 200, response.text
    return response.text


@pytest.fixture(scope="module")
def sent(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[Server, dict[str, Any], list[Recorded]]]:
    """A collector per module and store, and what health_app.py's SDK sent (recorded,
    then sent to it once). Its tests read it; the one that sends it all again (a
    retry) must leave it as it was, which it asserts."""
    with collectors(tmp_path_factory.mktemp("health")) as start:
        server = start_with_api(start, module_db_url)
        try:
            with recording() as recorder:
                result = run_health_app(recorder.url.replace("http://", f"http://{KEY}@")
                                        + f"/{project_id(server)}")
            for request in recorder.requests:
                assert replay(server, request).status_code == 200
        except BaseException:
            server.stop()  # `collectors` stops its collectors only after a clean yield
            raise
        yield server, result, recorder.requests


# By hand from health_app.py: per release, (sessions, exited, errored, crashed,
# abnormal, users, crashed users, crash-free sessions, crash-free users, adoption).
# The server-mode aggregates carry no user; the worker's sessions do (u1, u2, u2).
EXPECTED = {
    "shop@1.0": (10, 6, 1, 3, 0, 0, 0, 0.7, None, round(10 / 23, 9)),
    "shop@1.1": (10, 9, 0, 1, 0, 0, 0, 0.9, None, round(10 / 23, 9)),
    "worker@2.0": (3, 2, 1, 0, 0, 2, 0, 1.0, 1.0, round(3 / 23, 9)),
}


def figures(server: Server) -> dict[str, tuple[Any, ...]]:
    listed = api(server, "/releases", range="24h")["releases"]
    assert {r["environment"] for r in listed} == {"prod"}
    return {r["release"]: (r["sessions"], r["exited"], r["errored"], r["crashed"],
                           r["abnormal"], r["users"], r["crashed_users"],
                           *(None if r[k] is None else round(r[k], 9) for k in (
                               "crash_free_sessions", "crash_free_users", "adoption")))
            for r in listed}


def test_the_sdks_sessions_give_exact_figures_and_a_retry_counts_once(
        sent: tuple[Server, dict[str, Any], list[Recorded]]) -> None:
    server, _, requests_sent = sent
    kinds = {header["type"] for request in requests_sent
             for header, _ in envelope_items(request.body)}
    assert {"sessions", "session", "user_report", "event"} <= kinds
    assert figures(server) == EXPECTED
    for request in requests_sent:  # every envelope again: the SDK's retry
        assert replay(server, request).status_code == 200
    assert figures(server) == EXPECTED

    one = api(server, "/releases/" + requests.utils.quote("shop@1.0", safe=""), range="24h")
    assert (one["total"]["sessions"], one["total"]["crashed"]) == (10, 3)
    assert one["total"]["crash_free_sessions"] == pytest.approx(0.7)
    assert [e["environment"] for e in one["environments"]] == ["prod"]
    assert sum(p["sessions"] for p in one["series"]) == 10

    listing = page(server, "/releases?range=24h")
    row = listing[listing.index('data-release="shop@1.0"'):]
    row = row[:row.index("</tr>")]
    assert '<td class="num sessions">10</td>' in row
    assert '<td class="num crash-free-sessions">70.0%</td>' in row
    assert '<td class="num crashed">3</td>' in row
    assert '<td class="num adoption">43.5%</td>' in row
    release_page = page(server, "/releases/shop%401.1?range=24h")
    assert '<dd class="crash-free-sessions">90.0%</dd>' in release_page


def test_a_user_report_shows_on_its_issue_escaped(
        sent: tuple[Server, dict[str, Any], list[Recorded]]) -> None:
    server, result, _ = sent
    listed = api(server, "/error-groups", status="all")["items"]
    [crash] = [item["group"] for item in listed if item["group"]["exception_class"]
               .endswith("Crash")]
    group = api(server, f"/error-groups/{crash['id']}")
    [said] = group["feedback"]
    assert (said["source"], said["name"], said["email"], said["associated_event_id"]) == (
        "user_report", "Ada <b>Lovelace</b>", "ada@example.com", result["crashes"][0])
    assert said["message"] == "It crashed when I paid <script>alert(1)</script>"
    text = page(server, f"/errors/{crash['id']}")
    assert "<script>alert(1)</script>" not in text and "<b>Lovelace" not in text
    assert html.escape("It crashed when I paid <script>alert(1)</script>",
                       quote=False) in text
    feedback = api(server, "/feedback")
    assert feedback["total"] == 1 and feedback["items"][0]["group_id"] == crash["id"]
    listing = page(server, "/feedback")
    assert f'href="/projects/acme/errors/{crash["id"]}"' in listing
    assert "<script>alert(1)</script>" not in listing


@pytest.mark.postgres
def test_the_sdks_sessions_sent_to_two_collectors_at_once_count_once(
        start: Callable[..., Server], pg_url: str) -> None:
    """Each envelope health_app.py's SDK sent reaches two collectors sharing one
    PostgreSQL database at the same time (a retry landing on another collector behind
    a load balancer): the figures are those of one copy."""
    from concurrent.futures import ThreadPoolExecutor

    servers = [start_with_api(start, pg_url), start_with_api(start, pg_url)]
    with recording() as recorder:
        run_health_app(recorder.url.replace("http://", f"http://{KEY}@")
                       + f"/{project_id(servers[0])}")
    jobs = [(server, request) for request in recorder.requests for server in servers]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda job: replay(*job), jobs))
    assert {a.status_code for a in answers} == {200}
    assert figures(servers[0]) == figures(servers[1]) == EXPECTED
