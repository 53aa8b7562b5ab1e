"""The command line: keys, first run, db upgrade."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import requests

from tests.support.server import REPO, Server


def sounding(db_url: str, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    full_env.update({"SOUNDING_DATABASE_URL": db_url, **(env or {})})
    return subprocess.run([sys.executable, "-m", "sounding", *args], cwd=REPO, env=full_env,
                          capture_output=True, text=True, timeout=60)


def test_keys_create_list_revoke(start: Callable[..., Server], sqlite_url: str) -> None:
    created = sounding(sqlite_url, "keys", "create", "--project", "shop")
    assert created.returncode == 0, created.stderr
    key = re.search(r"key:\s+(snd_\S+)", created.stdout).group(1)  # type: ignore[union-attr]
    key_id = re.search(r"key id:\s+(\w+)", created.stdout).group(1)  # type: ignore[union-attr]
    # The key itself is nowhere in the database.
    assert key.encode() not in Path(sqlite_url.removeprefix("sqlite:///")).read_bytes()

    server = start(sqlite_url, keys={}, env={"SOUNDING__AUTH__CACHE_SECONDS": "0"})
    assert server.post("/ingest/deploys", {"git_sha": "a"}, key=key).status_code == 202

    listed = sounding(sqlite_url, "keys", "list")
    assert re.search(rf"{key_id}\s+shop\s+\S+\s+active", listed.stdout), listed.stdout
    assert key not in listed.stdout

    revoked = sounding(sqlite_url, "keys", "revoke", key_id)
    assert revoked.returncode == 0, revoked.stderr
    assert server.post("/ingest/deploys", {"git_sha": "a"}, key=key).status_code == 401
    assert "revoked" in sounding(sqlite_url, "keys", "list").stdout
    assert sounding(sqlite_url, "keys", "revoke", key_id).returncode == 1


def test_first_run_creates_a_default_project_and_prints_its_key_once(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, keys={})
    match = re.search(r"^\s+(snd_\S+)$", server.wait_for_log("health"), re.MULTILINE)
    assert match, server.log()
    key = match.group(1)
    assert f"OTEL_EXPORTER_OTLP_ENDPOINT={server.base}/ingest" in server.log()
    response = requests.post(server.base + "/ingest/deploys", json={"git_sha": "a"},
                             headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert response.status_code == 202
    assert server.query("SELECT name FROM projects")[0][0] == "default"
    # The same key in a Sentry DSN, printed to copy, takes envelopes.
    project_id = server.query("SELECT id FROM projects")[0][0]
    dsn = server.base.replace("http://", f"http://{key}@") + f"/{project_id}"
    assert f"Sentry SDKs: set the DSN to\n    {dsn}\n" in server.wait_for_log("Sentry SDKs")
    response = requests.post(f"{server.base}/api/{project_id}/envelope/",
                             data=f'{{"dsn":"{dsn}"}}\n{{"type":"session"}}\n{{}}\n',
                             timeout=10)
    assert response.status_code == 200, response.text
    assert server.stop() == 0
    again = start(sqlite_url, keys={})
    assert again.stop() == 0
    assert "First run" not in again.log()


def test_db_upgrade_is_idempotent(empty_sqlite_url: str) -> None:
    for _ in range(2):
        result = sounding(empty_sqlite_url, "db", "upgrade")
        assert result.returncode == 0, result.stderr
        assert "latest schema" in result.stdout


def test_bad_environment_is_a_configuration_error_exit_2(sqlite_url: str) -> None:
    result = sounding(sqlite_url, "serve", env={"SOUNDING_API_KEYS": "no-colon"})
    assert result.returncode == 2
    assert "configuration error" in result.stderr and "project:key" in result.stderr


def test_a_misspelt_section_stops_serve_with_exit_2_naming_the_nearest(
        sqlite_url: str, tmp_path: Path) -> None:
    path = tmp_path / "sounding.yaml"
    path.write_text("recievers:\n  http:\n    port: 3100\n")
    result = sounding(sqlite_url, "--config", str(path), "serve")
    assert result.returncode == 2, result.stderr
    assert "unknown key recievers (did you mean receivers?)" in result.stderr
    assert "Sounding listening" not in result.stdout  # refused before binding anything


def test_a_misspelt_key_from_the_environment_stops_serve_with_exit_2(sqlite_url: str) -> None:
    result = sounding(sqlite_url, "serve", env={"SOUNDING__RECEIVERS__HTTP__PROT": "3100"})
    assert result.returncode == 2, result.stderr
    assert "unknown key receivers.http.prot (did you mean port?)" in result.stderr


def test_keys_create_sentry_prints_a_dsn_that_sdks_can_use(
        start: Callable[..., Server], sqlite_url: str) -> None:
    created = sounding(sqlite_url, "keys", "create", "--sentry", "--project", "shop",
                       env={"SOUNDING_HTTP_PORT": "3999"})
    assert created.returncode == 0, created.stderr
    key = re.search(r"key:\s+(\S+)", created.stdout).group(1)  # type: ignore[union-attr]
    assert re.fullmatch(r"[0-9a-f]{32}", key)
    server = start(sqlite_url, keys={}, env={"SOUNDING__AUTH__CACHE_SECONDS": "0"})
    project_id = server.query("SELECT id FROM projects WHERE name = 'shop'")[0][0]
    assert f"DSN:     http://{key}@127.0.0.1:3999/{project_id}\n" in created.stdout
    assert key.encode() not in Path(sqlite_url.removeprefix("sqlite:///")).read_bytes()
    response = requests.post(f"{server.base}/api/{project_id}/envelope/?sentry_key={key}",
                             data=b'{}\n{"type":"session"}\n{}\n', timeout=10)
    assert response.status_code == 200, response.text

    for host, shown in [("errors.example.com", "http://{k}@errors.example.com:3999/"),
                        ("errors.example.com:443", "http://{k}@errors.example.com:443/"),
                        ("https://errors.example.com", "https://{k}@errors.example.com/")]:
        again = sounding(sqlite_url, "keys", "create", "--sentry", "--project", "shop",
                         "--host", host, env={"SOUNDING_HTTP_PORT": "3999"})
        other = re.search(r"key:\s+(\S+)", again.stdout).group(1)  # type: ignore[union-attr]
        assert f"DSN:     {shown.format(k=other)}{project_id}\n" in again.stdout
