"""GET /metrics: the build's identity, no `*_created` series, OpenMetrics when asked,
and `health.token` guarding it and /health's details, on the real server."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

import sounding
from tests.support.server import Server, collectors

TOKEN = "metrics-token-0123456789"
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def _get(server: Server, path: str, **headers: str) -> requests.Response:
    return requests.get(server.base + path, headers=headers, timeout=10)


def test_the_classic_text_format_by_default_with_build_info_and_no_created_series(
        shared_server: Server) -> None:
    # One request first, so that the labelled counters and histograms have children.
    assert _get(shared_server, "/health").status_code == 200
    response = _get(shared_server, "/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    families = {family.name: family for family in text_string_to_metric_families(response.text)}
    (build,) = families["sounding_build_info"].samples
    assert build.name == "sounding_build_info" and build.value == 1
    assert build.labels["version"] == sounding.__version__
    assert re.fullmatch(r"3\.\d+\.\d+\S*", build.labels["python"])
    assert build.labels["event_loop"] == "uvloop"  # service.event_loop auto, uvloop installed
    assert "sounding_request_seconds" in families  # histograms are there...
    assert "_created" not in response.text  # ...without their creation time


def test_the_standard_event_loop_when_configured_serves_and_says_so(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING__SERVICE__EVENT_LOOP": "asyncio"})
    assert server.post("/ingest/errors", {"exception_class": "E", "message": "m",
                                          "backtrace": ["a.py:1 in f"],
                                          "fingerprint": "loop"}).status_code == 202
    assert re.search(r'^sounding_build_info\{.*event_loop="asyncio"',
                     _get(server, "/metrics").text, re.M)


@pytest.mark.parametrize("accept", [PROMETHEUS_ACCEPT, "application/openmetrics-text"])
def test_openmetrics_when_the_scraper_asks_for_it(shared_server: Server, accept: str) -> None:
    response = _get(shared_server, "/metrics", Accept=accept)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")
    assert re.search(r'^sounding_build_info\{.*version="' + re.escape(sounding.__version__),
                     response.text, re.M)
    assert "_created" not in response.text


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One guarded collector for the module: its tests only read /metrics and /health."""
    with collectors(tmp_path_factory.mktemp("guarded")) as start:
        yield start(env={"SOUNDING_HEALTH_TOKEN": TOKEN})


def test_a_token_guards_metrics_with_401(guarded: Server) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"},
                    {"Authorization": f"Basic {TOKEN}"}, {"Authorization": "Bearer"},
                    {"Authorization": f"Bearer {TOKEN[:-1]}"}):
        response = _get(guarded, "/metrics", **headers)
        assert response.status_code == 401, headers
        assert "health.token" in response.json()["error"]
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "sounding_" not in response.text
    response = _get(guarded, "/metrics", Authorization=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert "sounding_build_info" in response.text
    assert TOKEN not in guarded.log()


def test_health_keeps_its_status_code_without_the_token_but_not_its_details(
        guarded: Server) -> None:
    response = _get(guarded, "/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    response = _get(guarded, "/health", Authorization="Bearer wrong-token-0123456789")
    assert response.json() == {"status": "ok"}
    response = _get(guarded, "/health", Authorization=f"Bearer {TOKEN}")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["db_ok"] is True and "uptime_seconds" in body


def test_a_short_token_is_refused_at_start_without_echoing_it(
        start: Callable[..., Server], sqlite_url: str) -> None:
    with pytest.raises(RuntimeError) as failed:
        start(sqlite_url, env={"SOUNDING__HEALTH__TOKEN": "short-secret"})
    assert "health.token must be a string of at least 16 characters" in str(failed.value)
    assert "short-secret" not in str(failed.value)
