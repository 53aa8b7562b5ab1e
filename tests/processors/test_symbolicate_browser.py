"""Symbolication of a browser's errors, with real tools only: the TypeScript fixture
(tests/js/sourcemap_app) built by esbuild, injected and uploaded by `sentry-cli`, and
built again by Vite with @sentry/vite-plugin uploading during the build; each run in
Chromium with @sentry/browser pointed at Sounding's DSN. Both builds' errors show the
original .ts frames and land in one group."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import pytest
import requests

from tests.dashboard.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.dashboard.test_release_api import make_token
from tests.processors.test_symbolicate import ADMIN, api, check_mapped, in_app_frames, wait_groups
from tests.receiver.sentry.helpers import KEYS, dsn
from tests.support import clients
from tests.support.jsbuild import esbuild, sentry_cli, vite_build
from tests.support.server import Server, collectors

# Long (tests/conftest.py): esbuild, sentry-cli, a Vite build and Chromium, ~40 s alone.
pytestmark = [pytest.mark.clients(clients.SENTRY_JAVASCRIPT, clients.SENTRY_CLI), pytest.mark.long]


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, str, Path]]:
    """Sounding on SQLite, a static server for the builds (its origin allowed by CORS),
    and a member's token."""
    root = tmp_path_factory.mktemp("site")
    static = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    threading.Thread(target=static.serve_forever, daemon=True).start()
    origin = f"http://127.0.0.1:{static.server_address[1]}"
    try:
        with collectors(tmp_path_factory.mktemp("browser")) as start:
            server = start(keys=KEYS, env={"SOUNDING_ADMIN_TOKEN": ADMIN,
                                           "SOUNDING_CORS_ORIGINS": origin})
            token = make_token(server.db_url, "ci@example.com", "member")
            yield server, token, origin, root
    finally:
        static.shutdown()


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing; `make test` installs it (Debian chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def open_page(chromium: object, url: str) -> None:
    page = chromium.new_page()  # type: ignore[attr-defined]
    try:
        page.goto(url)
        page.wait_for_function("document.title !== 'loading'", timeout=20_000)
        assert page.title() == "sent"
    finally:
        page.close()


def esbuild_site(root: Path, name: str, server: Server, token: str, *extra: str) -> None:
    site = root / name
    esbuild(site, entry="src/browser_main.ts", extra=extra)
    (site / "index.html").write_text('<!doctype html><title>loading</title>'
                                     '<script src="app.js"></script>')
    sentry_cli("sourcemaps", "inject", str(site), url=server.base, token=None)
    sentry_cli("sourcemaps", "upload", str(site), url=server.base, token=token)


def test_browser_builds_are_mapped_and_two_minifications_are_one_group(
        world: tuple[Server, str, str, Path], chromium: object) -> None:
    server, token, origin, root = world
    esbuild_site(root, "one", server, token)
    query = urlencode({"dsn": dsn(server), "release": "web@1"})
    open_page(chromium, f"{origin}/one/index.html?{query}")
    groups = wait_groups(server, 1)
    assert len(groups) == 1, groups
    check_mapped(api(server, f"/error-groups/{groups[0]['id']}"), "/one/app.js")
    # Minified otherwise: names kept, other columns, another debug id.
    esbuild_site(root, "two", server, token, "--keep-names", "--minify-syntax=false")
    open_page(chromium, f"{origin}/two/index.html?{query}")
    groups = wait_groups(server, 2)
    assert [g["count"] for g in groups] == [2], groups
    group = api(server, f"/error-groups/{groups[0]['id']}")
    check_mapped(group, "/two/app.js")
    page = requests.get(server.base + f"/projects/acme/errors/{groups[0]['id']}", timeout=10,
                        headers={"Authorization": f"Bearer {ADMIN}"})
    assert "checkout.ts" in page.text and "mapped from <code>" in page.text


def test_the_vite_plugin_uploads_during_the_build(
        world: tuple[Server, str, str, Path], chromium: object) -> None:
    server, token, origin, root = world
    before = server.query("SELECT count(*) FROM artifact_bundles")[0][0]
    vite_build(root / "vite", url=server.base, token=token)
    assert server.query("SELECT count(*) FROM artifact_bundles")[0][0] == before + 1
    query = urlencode({"dsn": dsn(server), "release": "web@vite"})
    open_page(chromium, f"{origin}/vite/index.html?{query}")
    deadline = time.monotonic() + 20
    while not (found := [g for g in api(server, "/error-groups?release=web@vite")["items"]]):
        assert time.monotonic() < deadline, "the Vite build's error never arrived"
        time.sleep(0.2)
    group = api(server, f"/error-groups/{found[0]['group']['id']}")
    event = group["event"]
    assert event["release"] == "web@vite", event
    check_mapped(group, ".js", colno=15)  # Vite maps the throw at `Error`
    raw = in_app_frames(group)[-1]["raw"]
    assert "/vite/assets/index-" in (raw.get("abs_path") or raw["filename"]), raw
