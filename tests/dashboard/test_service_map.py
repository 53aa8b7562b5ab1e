"""The service map and the operations of real instrumented applications: two Flask
services auto-instrumented by OpenTelemetry (apm_app.py), and one traced by the
Sentry SDK (apm_sentry_app.py), sent to a real collector on SQLite and on
PostgreSQL, read back through the read API and the pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.dashboard.apm_support import api, get, run_app
from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.helpers import ORIGIN, dsn
from tests.support import clients
from tests.support.server import Projects, Server, collectors, project_keys

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2, clients.OPENTELEMETRY_PYTHON)

REQUESTS = 4


def _get(server: Server, path: str, **params: str) -> requests.Response:
    return get(server, path, **{"range": "1h", **params})


def _api(server: Server, path: str, **params: str) -> Any:
    return api(server, path, **{"range": "1h", **params})


@pytest.fixture(scope="module")
def apm_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[Projects]:
    """One collector per module and store, as the Sentry door's tests start it."""
    with collectors(tmp_path_factory.mktemp("apm")) as start:
        yield Projects(start(module_db_url, keys=project_keys(),
                             env={"SOUNDING_CORS_ORIGINS": ORIGIN,
                                  "SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN}))


@pytest.fixture
def apm_server(apm_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    return apm_projects.take()


def test_otel_services_their_database_and_the_call_between_them(apm_server: Server) -> None:
    sent = run_app("apm_app.py", apm_server.base + "/ingest/v1/traces",
                apm_server.key, str(REQUESTS))
    assert sent["flushed"]
    found = _api(apm_server, "/service-map")
    nodes = {n["id"]: n for n in found["nodes"]}
    assert nodes["service:shop"]["stats"]["count"] == REQUESTS
    assert nodes["service:inventory"]["stats"]["count"] == REQUESTS
    edges = {(e["source"], e["target"]): e for e in found["edges"]}
    call = edges[("service:shop", "service:inventory")]
    assert call["stats"]["count"] == REQUESTS
    assert call["peers"] == [["http", sent["inventory"]]]
    assert not any(n.startswith("http:") for n in nodes)  # the peer is drawn as inventory
    [shop_db] = [t for s, t in edges if s == "service:shop" and t.startswith("database:")]
    assert nodes[shop_db]["name"].startswith("sqlite ")
    # The N+1 loop's queries and a connect per request, from SQLAlchemy's spans.
    assert edges[("service:shop", shop_db)]["stats"]["count"] == REQUESTS * (sent["lines"] + 1)
    [stock_db] = [t for s, t in edges if s == "service:inventory"]
    assert edges[("service:inventory", stock_db)]["stats"]["count"] == REQUESTS

    ops = _api(apm_server, "/operations", service="shop", sort="busiest")["operations"]
    by_name = {(o["kind"], o["name"]): o for o in ops}
    assert by_name[("http", "GET /orders/<int:order>")]["stats"]["count"] == REQUESTS
    query = by_name[("database", "SELECT item FROM lines WHERE id = ?")]
    assert query["stats"]["count"] == REQUESTS * sent["lines"]
    assert sum(n for _, n in query["distribution"]) == REQUESTS * sent["lines"]
    assert by_name[("client", "GET")]["peer"] == sent["inventory"]
    stock = _api(apm_server, "/operations", service="inventory")["operations"]
    assert ("database", "SELECT n FROM stock WHERE item = ?") in {
        (o["kind"], o["name"]) for o in stock}

    home = f"/projects/{apm_server.project}"
    page = _get(apm_server, home + "/service-map")
    assert page.status_code == 200
    assert home + "/traces?" in page.text and "service=inventory" in page.text
    listed = _get(apm_server, home + "/operations", service="shop", sort="failing")
    assert listed.status_code == 200
    assert "SELECT item FROM lines WHERE id = ?" in listed.text


def test_sentry_transactions_feed_the_same_rollups(apm_server: Server) -> None:
    sent = run_app("apm_sentry_app.py", dsn(apm_server, apm_server.key, apm_server.project),
                   str(REQUESTS))
    found = _api(apm_server, "/service-map")
    nodes = {n["id"]: n for n in found["nodes"]}
    assert nodes["service:checkout"]["stats"]["count"] == REQUESTS
    edges = {(e["source"], e["target"]): e["stats"]["count"] for e in found["edges"]}
    assert edges[("service:checkout", f"http:{sent['prices']}")] == REQUESTS
    [db] = [t for s, t in edges if t.startswith("database:")]
    assert edges[("service:checkout", db)] >= REQUESTS * sent["lines"]
    ops = _api(apm_server, "/operations", service="checkout")["operations"]
    by_name = {(o["kind"], o["name"]): o["stats"]["count"] for o in ops}
    assert by_name[("http", "GET /orders/<int:order>")] == REQUESTS
    assert by_name[("database", "SELECT item FROM lines WHERE id = ?")] == (
        REQUESTS * sent["lines"])


def test_bad_arguments_are_400s_naming_them(apm_server: Server) -> None:
    read_api = f"/api/v1/projects/{apm_server.project}"
    assert "'service' is required" in _get(apm_server, read_api + "/operations").text
    answer = _get(apm_server, read_api + "/operations", service="x", sort="sideways")
    assert answer.status_code == 400 and "sort must be one of" in answer.text
    home = f"/projects/{apm_server.project}"
    assert _get(apm_server, home + "/operations", sort="x").status_code == 400


def test_names_a_client_sent_are_escaped(apm_server: Server) -> None:
    evil = "<script>alert(1)</script>"
    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": evil, "kind": 3,
            "startTimeUnixNano": str(__import__("time").time_ns() - 10**9),
            "endTimeUnixNano": str(__import__("time").time_ns()),
            "attributes": [{"key": "db.system", "value": {"stringValue": evil}},
                           {"key": "db.statement", "value": {"stringValue": evil}}]}
    body = {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": evil}}]},
        "scopeSpans": [{"spans": [span]}]}]}
    assert apm_server.post("/ingest/v1/traces", json=body).status_code in (200, 202)
    home = f"/projects/{apm_server.project}"
    for path, params in ((home + "/service-map", {}),
                         (home + "/operations", {"service": evil})):
        page = _get(apm_server, path, **params)
        assert page.status_code == 200 and evil not in page.text
        assert "&lt;script&gt;" in page.text
