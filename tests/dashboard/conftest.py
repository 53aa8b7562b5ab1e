"""A collector with the dashboard on, an admin token known to the tests, and a
logged-in Chromium page.

The browser tests share one collector per test process (session scope; each
pytest-xdist worker has its own): starting one costs seconds, and each test keeps its
data apart under names of its own (classes, searches, environments, services).
Chromium is launched once per module, not per session: Playwright's sync API keeps
its event loop running between calls, so while it is open asyncio.run() fails in
every later test of the process. Each test gets a fresh browser context: its own
cookies, login and page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dashboard.data import ADMIN_TOKEN
from tests.support.oidc_provider import IdP, identity_provider
from tests.support.server import Projects, Server, collectors, project_keys

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync",
                 "--disable-quic"]


@pytest.fixture(scope="module")
def dash_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One collector per module, for the read API and page tests that count what the
    whole store holds."""
    yield from _dashboard_server(tmp_path_factory)


@pytest.fixture(scope="module")
def dash_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[Projects]:
    """One collector per module and store, with the tests' admin token, handing each
    test a project of its own (tests/support/server.py `Projects`): for the tests that
    change what they read (statuses, merges), each in its own project's data."""
    with collectors(tmp_path_factory.mktemp("projects")) as start:
        yield Projects(start(module_db_url, keys=project_keys(),
                             env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN}))


def _dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with collectors(tmp_path_factory.mktemp("dash")) as start:
        yield start(env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})


@pytest.fixture(scope="module")
def idp() -> Iterator[IdP]:
    """A real OpenID provider (tests/js/oidc_provider.mjs) for the module."""
    with identity_provider() as provider:
        yield provider


@pytest.fixture(scope="module")
def sso_folder(tmp_path_factory: pytest.TempPathFactory, idp: IdP) -> Path:
    """A folder with sounding.yaml naming `idp` as two providers, for the SQLite file
    of `sso` and of any other collector a test starts beside it."""
    path = tmp_path_factory.mktemp("sso")
    (path / "sounding.yaml").write_text(idp.sounding_config())
    return path


@pytest.fixture(scope="module")
def sso(sso_folder: Path, idp: IdP) -> Iterator[Server]:
    """One collector for the module, logging in through `idp` (its redirect URIs
    registered there), with the tests' admin token."""
    with collectors(sso_folder) as start:
        server = start(config=str(sso_folder / "sounding.yaml"),
                       env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
        idp.register(server)
        yield server


@pytest.fixture(scope="session")
def browser_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The collector that every browser test's `page` is logged in to."""
    yield from _dashboard_server(tmp_path_factory)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing; `make test` installs it (Debian chromium)")
        pytest.skip(f"{CHROMIUM} is missing; run `make test` to install it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def login(page: object, base: str) -> None:
    page.goto(base + "/login")  # type: ignore[attr-defined]
    page.fill("#token", ADMIN_TOKEN)  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_load_state()  # type: ignore[attr-defined]


@pytest.fixture
def page(browser: object, browser_server: Server) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, browser_server.base)
    yield page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"
