"""The setup page (dashboard/setup.py): "Create a Sentry DSN" makes a key that the
Sentry door accepts, shows the full DSN once and keeps only the key's hash; the
POST needs the session's anti-forgery token; the address is the request's, or
`dashboard.public_url`."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import post_envelope
from tests.support.server import Projects, Server, collectors, project_keys

DSN = re.compile(r'<code id="dsn">(http://([0-9a-f]{32})@([^/<]+)/(\d+))</code>')
# A key created on the page is seen by the door at the next refresh of its key set.
FAST_KEYS = {"SOUNDING__AUTH__CACHE_SECONDS": "1", "SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN}


def logged_in(server: Server) -> requests.Session:
    session = requests.Session()
    form = session.get(server.base + "/login", timeout=10).text
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    session.post(server.base + "/login", data={"_xsrf": xsrf, "token": ADMIN_TOKEN},
                 timeout=10)
    return session


def xsrf_of(page: str) -> str:
    return re.search(r'name="_xsrf" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]


def project_id(server: Server, name: str) -> int:
    return int(server.query("SELECT id FROM projects WHERE name = :n", n=name)[0][0])


def accepted_within(server: Server, key: str, project: int, seconds: float = 10) -> bool:
    body = envelope({}, [item("client_report", {"discarded_events": []})])
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if post_envelope(server, body, key=key, project=project).status_code == 200:
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def setup_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[Projects]:
    with collectors(tmp_path_factory.mktemp("setup")) as start:
        yield Projects(start(module_db_url, keys=project_keys(), env=FAST_KEYS))


@pytest.fixture
def dash(setup_projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    return setup_projects.take()


def test_create_a_dsn_shown_once_that_the_sentry_door_accepts(dash: Server) -> None:
    session = logged_in(dash)
    setup = session.get(dash.project_url("/setup"), timeout=10)
    assert setup.status_code == 200
    pid = dash.project_id()
    host = dash.base.removeprefix("http://")
    assert f'dsn="http://&lt;key&gt;@{host}/{pid}"' in setup.text  # the snippets' example
    created = session.post(dash.base + "/setup", timeout=10, allow_redirects=False,
                           data={"project": dash.project, "_xsrf": xsrf_of(setup.text)})
    assert created.status_code == 200
    found = DSN.search(created.text)
    assert found is not None, created.text
    full, key, shown_host, shown_pid = found.groups()
    assert (shown_host, int(shown_pid)) == (host, pid)
    assert f'dsn="{full}"' in created.text and f'dsn: "{full}"' in created.text
    assert accepted_within(dash, key, pid)
    # Shown once: kept only as a hash, never in a later page or the log.
    assert key not in session.get(dash.project_url("/setup"), timeout=10).text
    assert dash.query("SELECT count(*) FROM api_keys WHERE key_hash LIKE :k",
                      k=f"%{key}%")[0][0] == 0
    assert key not in dash.log()


def test_the_post_needs_the_sessions_xsrf_token(dash: Server) -> None:
    session = logged_in(dash)
    forged = session.post(dash.base + "/setup", data={"project": dash.project}, timeout=10,
                          allow_redirects=False)
    assert forged.status_code == 403
    assert DSN.search(forged.text) is None
    keys_before = dash.query("SELECT count(*) FROM api_keys")[0][0]
    anonymous = requests.post(dash.base + "/setup", data={"project": dash.project}, timeout=10,
                              allow_redirects=False)
    assert anonymous.status_code == 401
    assert dash.query("SELECT count(*) FROM api_keys")[0][0] == keys_before


def test_a_new_project_from_the_empty_state(dash: Server) -> None:
    session = logged_in(dash)
    form = session.get(dash.base + "/setup", timeout=10)
    assert 'name="project" id="project-name"' in form.text
    created = session.post(dash.base + "/setup", timeout=10,
                           data={"project": "new shop", "_xsrf": xsrf_of(form.text)})
    found = DSN.search(created.text)
    assert found is not None
    assert int(found.group(4)) == project_id(dash, "new shop")
    blank = session.post(dash.base + "/setup", timeout=10,
                         data={"project": "  ", "_xsrf": xsrf_of(form.text)})
    assert blank.status_code == 400 and "project name must be 1 to 200" in blank.text


def test_a_configured_public_url_is_the_dsns_address(start: Callable[..., Server],
                                                     sqlite_url: str) -> None:
    server = start(sqlite_url, env={
        **FAST_KEYS, "SOUNDING__DASHBOARD__PUBLIC_URL": "https://errors.example.com:8443"})
    session = logged_in(server)
    setup = session.get(server.base + "/projects/acme/setup", timeout=10).text
    created = session.post(server.base + "/setup", timeout=10,
                           data={"project": "acme", "_xsrf": xsrf_of(setup)}).text
    assert re.search(r'<code id="dsn">https://[0-9a-f]{32}@errors\.example\.com:8443/\d+</code>',
                     created)


def test_the_empty_error_list_points_to_the_setup_page(dash: Server) -> None:
    page = requests.get(dash.project_url("/errors"), timeout=10,
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).text
    assert f'class="setup-link" href="/projects/{dash.project}/setup"' in page
