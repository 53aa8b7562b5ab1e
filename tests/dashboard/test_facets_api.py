"""The read API's environments, releases and tags (docs/api.md): the error
list's filters and their values, a group's facets and first release, an event's
tags, and a release's new groups; over HTTP against the real server, on SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, error, post_ok
from tests.support.server import Projects, Server


@pytest.fixture
def api_server(dash_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    return dash_projects.take()


def get(server: Server, path: str, **params: str) -> requests.Response:
    return requests.get(server.project_api(path), params=params, timeout=10,
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


def get_ok(server: Server, path: str, **params: str) -> Any:
    response = get(server, path, **params)
    assert response.status_code == 200, response.text
    return response.json()


def seed(server: Server) -> None:
    post_ok(server, "/ingest/errors/batch", {"errors": [
        error("checkout", timestamp="2026-11-20T10:00:00Z", environment="prod",
              release="1.0", service="web", tags={"browser": "Firefox"}),
        error("checkout", timestamp="2026-11-20T11:00:00Z", environment="prod",
              release="1.1", service="web", tags={"browser": "Firefox", "os": "Linux"}),
        error("checkout", timestamp="2026-11-20T12:00:00Z", environment="staging",
              release="1.1", service="web", tags={"browser": "Chrome"}),
        error("report", timestamp="2026-11-20T12:30:00Z", environment="staging",
              release="1.1", service="worker"),
        error("plain", timestamp="2026-11-20T12:40:00Z")]})


def fingerprints(document: Any) -> list[str]:
    return sorted(item["group"]["fingerprint"] for item in document["items"])


def test_the_group_list_filters_by_facets_and_lists_their_values(api_server: Server) -> None:
    seed(api_server)
    everything = get_ok(api_server, "/error-groups")
    assert fingerprints(everything) == ["checkout", "plain", "report"]
    assert everything["filters"] == {}
    assert everything["labels"] == {"environments": ["prod", "staging"],
                                    "releases": ["1.0", "1.1"], "services": ["web", "worker"]}
    prod = get_ok(api_server, "/error-groups", environment="prod")
    assert (fingerprints(prod), prod["total"]) == (["checkout"], 1)
    assert prod["filters"] == {"environment": "prod"}
    assert fingerprints(get_ok(api_server, "/error-groups", release="1.1",
                               service="worker")) == ["report"]
    assert fingerprints(get_ok(api_server, "/error-groups", environment="")) == [
        "checkout", "plain", "report"]  # the page's empty choice: no filter
    too_long = get(api_server, "/error-groups", release="r" * 201)
    assert too_long.status_code == 400
    assert "'release' must be at most 200 characters" in too_long.text


def test_a_group_shows_its_facets_first_release_and_event_tags(api_server: Server) -> None:
    seed(api_server)
    (group,) = get_ok(api_server, "/error-groups", service="web")["items"]
    document = get_ok(api_server, f"/error-groups/{group['group']['id']}")
    assert document["first_release"] == "1.0"
    facets = {f["name"]: f for f in document["facets"]}
    assert list(facets) == ["environment", "release", "service", "browser", "os"]
    assert [(v["value"], v["count"]) for v in facets["browser"]["values"]] == [
        ("Firefox", 2), ("Chrome", 1)]
    assert facets["environment"]["total"] == 3
    assert facets["release"]["values"][0]["share"] == pytest.approx(2 / 3)
    event = document["event"]  # the latest
    assert (event["environment"], event["release"], event["tags"]) == (
        "staging", "1.1", {"browser": "Chrome"})
    assert (event["level"], event["exceptions"], event["context"]) == (None, None, None)


def test_a_release_lists_its_new_groups_and_so_does_its_deploy(api_server: Server) -> None:
    seed(api_server)
    release = get_ok(api_server, "/releases/1.1")
    assert release["release"] == "1.1"
    assert sorted(g["fingerprint"] for g in release["new_groups"]) == ["report"]
    assert [g["fingerprint"] for g in get_ok(api_server, "/releases/1.0")["new_groups"]] == [
        "checkout"]
    assert get_ok(api_server, "/releases/" + quote("no/such release", safe=""))[
        "new_groups"] == []
    post_ok(api_server, "/ingest/deploys", {"git_sha": "abc", "version": "1.1",
                                             "timestamp": "2026-11-20T09:00:00Z"})
    (deploy,) = get_ok(api_server, "/deploys", range="custom", **{
        "from": "2026-11-20T00:00", "to": "2026-11-21T00:00"})["deploys"]
    assert [g["fingerprint"] for g in deploy["release_groups"]] == ["report"]
