"""A project with no data shows how to send it (dashboard/onboarding.py, empty.html):
OTLP environment variables, the Sentry DSN form and a curl, with the project's endpoint
and a key id filled in, never the key; everything escaped."""

from __future__ import annotations

import html
from collections.abc import Callable
from urllib.parse import quote

import pytest

from model.keyhash import key_id
from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.dashboard.test_setup import logged_in
from tests.support.server import Projects, Server


@pytest.fixture
def dash(dash_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own (empty) sees it."""
    return dash_projects.take()


def errors_page(server: Server, project: str | None = None) -> str:
    response = logged_in(server).get(
        server.base + f"/projects/{project or server.project}/errors", timeout=10)
    assert response.status_code == 200, response.text
    return response.text


def test_an_empty_project_shows_how_to_send_with_its_endpoint_and_key_id(dash: Server) -> None:
    text = html.unescape(errors_page(dash))
    kid = key_id(dash.key)
    assert "No data in" in text and dash.key not in text
    placeholder = f"<your key, id {kid}…>"
    project_id = dash.project_id()
    assert f"OTEL_EXPORTER_OTLP_ENDPOINT={dash.base}/ingest" in text
    assert f'OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer {placeholder}"' in text
    assert f'dsn="http://{placeholder}@{dash.base.removeprefix("http://")}/{project_id}"' in text
    assert f"curl -X POST {dash.base}/ingest/errors" in text
    assert f'-H "Authorization: Bearer {placeholder}"' in text
    assert f'href="/projects/{dash.project}/setup"' in text


def test_once_data_arrives_the_error_list_is_shown(dash: Server) -> None:
    post_ok(dash, "/ingest/errors", error("arrived", exception_class="ArrivedError"))
    text = errors_page(dash)
    assert "No data in" not in text and "ArrivedError" in text


def test_the_public_url_is_the_endpoint_and_names_are_escaped(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, keys={XSS: "key-of-the-xss-project"},
                   env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN,
                        "SOUNDING__DASHBOARD__PUBLIC_URL": "https://errors.example.com:8443"})
    text = errors_page(server, quote(XSS, safe=""))
    assert XSS not in text and html.escape(XSS) in text
    assert "key-of-the-xss-project" not in text
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=https://errors.example.com:8443/ingest" in text
    assert key_id("key-of-the-xss-project") in text
