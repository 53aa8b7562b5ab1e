"""Symbolication (processors/symbolicate.py, extensions/sourcemaps.py) end to end with
real tools only: the TypeScript fixture of tests/js/sourcemap_app bundled and minified
by esbuild, `sentry-cli sourcemaps inject` and `upload` against a running Sounding,
the bundle run by Node with @sentry/node pointed at Sounding's DSN. The group's read
API and page show the original .ts file, line, column, function and source lines,
and a second build with other minification lands in the same group."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.dashboard.test_release_api import make_token
from tests.receiver.sentry.helpers import KEYS, dsn
from tests.support import clients
from tests.support.jsbuild import JS_DIR, esbuild, sentry_cli
from tests.support.server import Server, collectors

pytestmark = pytest.mark.clients(clients.SENTRY_JAVASCRIPT, clients.SENTRY_CLI)

ADMIN = "sadm_symbolicate-test-admin-token-0123456789"


@pytest.fixture(scope="module")
def world(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[Server, str, Path]]:
    with collectors(tmp_path_factory.mktemp("symbolicate")) as start:
        server = start(module_db_url, keys=KEYS, env={"SOUNDING_ADMIN_TOKEN": ADMIN})
        token = make_token(module_db_url, "ci@example.com", "member")
        yield server, token, tmp_path_factory.mktemp("builds")


def node_build(out: Path, server: Server, token: str, *extra: str) -> Path:
    bundle = esbuild(out, entry="src/node_main.ts", platform="node",
                     extra=("--external:@sentry/node", *extra))
    sentry_cli("sourcemaps", "inject", str(out), url=server.base, token=None)
    sentry_cli("sourcemaps", "upload", str(out), url=server.base, token=token)
    return bundle


def run_node(bundle: Path, server: Server, release: str) -> None:
    env = {**os.environ, "NODE_PATH": str(JS_DIR / "node_modules")}
    done = subprocess.run(["node", str(bundle), dsn(server), release], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def api(server: Server, path: str) -> dict:
    answer = requests.get(server.base + "/api/v1/projects/acme" + path, timeout=10,
                          headers={"Authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def wait_groups(server: Server, events: int) -> list[dict]:
    """The open groups once `events` errors are stored."""
    deadline = time.monotonic() + 20
    while True:
        items = api(server, "/error-groups")["items"]
        if sum(i["group"]["count"] for i in items) >= events or time.monotonic() > deadline:
            return [i["group"] for i in items]
        time.sleep(0.2)


def in_app_frames(group: dict) -> list[dict]:
    """The in-app frames of the raised exception, as sent (before mapping) or mapped."""
    frames = group["event"]["exceptions"][-1]["frames"]
    return [f for f in frames if f.get("in_app") is True or "raw" in f]


def check_mapped(group: dict, entry: str, colno: int = 11) -> None:
    """The original TypeScript: file, line, column, function, source lines."""
    frames = in_app_frames(group)
    mapped = [f for f in frames if "mapped" in f]
    assert len(mapped) >= 0.95 * len(frames), frames
    innermost, caller = mapped[-1], mapped[-2]
    assert innermost["abs_path"].endswith("/src/checkout.ts"), innermost
    assert (innermost["lineno"], innermost["colno"], innermost["function"]) == \
        (10, colno, "priceOf"), innermost
    assert innermost["context_line"].strip() == \
        "throw new Error(`cart total ${total} is over the limit`);"
    assert innermost["pre_context"][-1].strip() == "if (total > 100) {"
    assert (caller["function"], caller["lineno"]) == ("checkout", 16), caller
    raw = innermost["raw"]
    assert (raw.get("abs_path") or raw["filename"]).endswith(entry), raw
    assert innermost["mapped"]["via"].startswith("debug id ")
    backtrace = group["event"]["backtrace"]
    assert backtrace[0].startswith("at priceOf (") and f"checkout.ts:10:{colno}" in backtrace[0]


def test_a_node_bundle_is_mapped_and_two_builds_are_one_group(
        world: tuple[Server, str, Path]) -> None:
    server, token, builds = world
    run_node(node_build(builds / "one", server, token), server, "shop@1")
    groups = wait_groups(server, 1)
    assert len(groups) == 1, groups
    check_mapped(api(server, f"/error-groups/{groups[0]['id']}"), "/one/app.js")
    # Another build, minified otherwise (names kept, other columns, another debug id).
    run_node(node_build(builds / "two", server, token, "--keep-names"), server, "shop@2")
    groups = wait_groups(server, 2)
    assert [g["count"] for g in groups] == [2], groups
    group = api(server, f"/error-groups/{groups[0]['id']}")
    check_mapped(group, "/two/app.js")
    page = requests.get(server.base + f"/projects/acme/errors/{groups[0]['id']}", timeout=10,
                        headers={"Authorization": f"Bearer {ADMIN}"})
    assert page.status_code == 200
    assert "checkout.ts" in page.text and "priceOf" in page.text
    assert "mapped from <code>" in page.text and "/two/app.js:" in page.text
    assert "throw new Error(`cart total ${total} is over the limit`);" in page.text \
        .replace("&#96;", "`").replace("&#36;", "$").replace("&#123;", "{").replace("&#125;", "}")


def test_a_frame_without_its_map_says_why(world: tuple[Server, str, Path]) -> None:
    server, token, builds = world
    bundle = esbuild(builds / "unuploaded", entry="src/node_main.ts", platform="node",
                     extra=("--external:@sentry/node", "--banner:js=/* not uploaded */"))
    sentry_cli("sourcemaps", "inject", str(builds / "unuploaded"), url=server.base,
               token=None)
    run_node(bundle, server, "shop@3")
    deadline = time.monotonic() + 20
    while True:
        rows = server.query("SELECT exceptions FROM error_events WHERE release = 'shop@3'")
        if rows or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert rows
    stored = rows[0][0] if isinstance(rows[0][0], str) else json.dumps(rows[0][0])  # PG: JSON
    assert "no source map was uploaded with debug id" in stored
    group_id = server.query("SELECT g.id FROM error_groups g JOIN error_events e ON "
                            "e.fingerprint = g.fingerprint WHERE e.release = 'shop@3'")[0][0]
    page = requests.get(server.base + f"/projects/acme/errors/{group_id}", timeout=10,
                        headers={"Authorization": f"Bearer {ADMIN}"})
    assert "not mapped: no source map was uploaded with debug id" in page.text


def otlp_log(stack: str, release: str) -> dict:
    def attr(key: str, value: str) -> dict:
        return {"key": key, "value": {"stringValue": value}}

    return {"resourceLogs": [{
        "resource": {"attributes": [attr("service.name", "shop-node"),
                                    attr("service.version", release)]},
        "scopeLogs": [{"scope": {"name": "tests"}, "logRecords": [{
            "timeUnixNano": str(time.time_ns()), "severityNumber": 17,
            "body": {"stringValue": "checkout failed"},
            "attributes": [attr("exception.type", "Error"),
                           attr("exception.message", "cart total 130 is over the limit"),
                           attr("exception.stacktrace", stack)]}]}]}]}


def test_an_opentelemetry_javascript_exception_is_mapped_by_release_and_url(
        world: tuple[Server, str, Path]) -> None:
    """A legacy upload (no debug ids; `--release` and a URL prefix) maps the text stack
    trace an OpenTelemetry SDK records, by its service.version."""
    server, token, builds = world
    out = builds / "otel"
    bundle = esbuild(out, entry="src/stack_main.ts", platform="node")
    sentry_cli("sourcemaps", "upload", "--release", "otel@1", "--url-prefix", f"~{out}",
               str(out), url=server.base, token=token)
    done = subprocess.run(["node", str(bundle)], capture_output=True, text=True, timeout=30)
    stack = json.loads(done.stdout)["stack"]
    assert f"{out}/app.js:" in stack, stack
    answer = requests.post(server.base + "/ingest/v1/logs", json=otlp_log(stack, "otel@1"),
                           headers={"Authorization": f"Bearer {KEYS['acme']}"}, timeout=10)
    assert answer.status_code in (200, 202), answer.text
    deadline = time.monotonic() + 20
    while not (found := api(server, "/error-groups?release=otel@1")["items"]):
        assert time.monotonic() < deadline, "the exception never became a group"
        time.sleep(0.2)
    group = api(server, f"/error-groups/{found[0]['group']['id']}")
    frames = group["event"]["exceptions"][-1]["frames"]
    innermost = frames[-1]
    assert innermost["abs_path"].endswith("/src/checkout.ts"), innermost
    assert (innermost["lineno"], innermost["function"]) == (10, "priceOf"), innermost
    assert innermost["mapped"]["via"] == "release otel@1"
    assert innermost["context_line"].strip().startswith("throw new Error(")
    assert group["event"]["backtrace"][0].startswith("at priceOf (")
