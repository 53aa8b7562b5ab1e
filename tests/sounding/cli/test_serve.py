"""`sounding serve`: every port is bound before anything is created, so a busy port
costs nothing (one line, exit 2, an empty database) and the next start prints the
first-run key and admin token once; --port, --grpc-port and --config after `serve`."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
from sqlalchemy import create_engine, inspect, text

from tests.support.server import REPO, Server

ENTRY_POINT = Path(sys.executable).parent / "sounding"


@contextmanager
def held_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _env(db_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    env.update({"SOUNDING_DATABASE_URL": db_url, "SOUNDING_HTTP_HOST": "127.0.0.1",
                "SOUNDING_HTTP_PORT": "0", "SOUNDING_GRPC_PORT": "0",
                "SOUNDING__RECEIVERS__OTLP_GRPC__HOST": "127.0.0.1",
                "SOUNDING_OTLP_HTTP_PORT": "0",
                "SOUNDING__RECEIVERS__OTLP_HTTP__HOST": "127.0.0.1", **extra})
    return env


def _serve(db_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ENTRY_POINT), "serve", *args], cwd=REPO,
                          env=_env(db_url, **env), capture_output=True, text=True, timeout=60)


def _projects(db_url: str) -> list[str]:
    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        if "projects" not in inspect(engine).get_table_names():
            return []
        with engine.connect() as conn:
            return [row[0] for row in conn.execute(text("SELECT name FROM projects"))]
    finally:
        engine.dispose()


@pytest.mark.parametrize(("where", "line"), [
    (("--port", "{port}"), "(receivers.http.port, SOUNDING_HTTP_PORT, serve --port)"),
    (("--grpc-port", "{port}"),
     "(receivers.otlp_grpc.port, SOUNDING_GRPC_PORT, serve --grpc-port)"),
    ({"SOUNDING_OTLP_HTTP_PORT": "{port}", "SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true"},
     "(receivers.otlp_http.port, SOUNDING_OTLP_HTTP_PORT)"),
    ({"SOUNDING__DASHBOARD__PORT": "{port}", "SOUNDING__DASHBOARD__HOST": "127.0.0.1"},
     "(dashboard.port, SOUNDING__DASHBOARD__PORT)"),
])
def test_a_busy_port_is_one_line_exit_2_and_nothing_created(
        db_url: str, start: Callable[..., Server],
        where: tuple[str, ...] | dict[str, str], line: str) -> None:
    with held_port() as port:
        if isinstance(where, dict):
            result = _serve(db_url, **{k: v.format(port=port) for k, v in where.items()})
        else:
            result = _serve(db_url, *(arg.format(port=port) for arg in where))
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"sounding: port {port} is in use {line}\n"
    assert result.stdout == ""
    assert _projects(db_url) == []

    # The port moved (here: every port free), the first run happens, once.
    server = start(db_url, keys={})
    printed = server.wait_for_log("admin token (shown once")
    keys = re.findall(r"^\s+(snd_\w+)$", printed, re.MULTILINE)
    assert len(keys) == 1, printed
    assert requests.post(server.base + "/ingest/deploys", json={"git_sha": "a"},
                         headers={"Authorization": f"Bearer {keys[0]}"},
                         timeout=10).status_code == 202
    assert _projects(db_url) == ["default"]


def test_port_flags_and_config_after_serve_override_the_file(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path) -> None:
    with held_port() as busy:
        config = tmp_path / "sounding.yaml"
        config.write_text(f"receivers:\n  http:\n    port: {busy}\n    host: 127.0.0.1\n"
                          f"  otlp_grpc:\n    port: {busy}\n    host: 127.0.0.1\n")
        with socket.socket() as probe:  # a free port, for --port
            probe.bind(("127.0.0.1", 0))
            free = probe.getsockname()[1]
        env = {k: v for k, v in _env(sqlite_url).items()
               if k not in ("SOUNDING_HTTP_PORT", "SOUNDING_GRPC_PORT")}
        proc = subprocess.Popen([str(ENTRY_POINT), "serve", "--config", str(config),
                                 "--port", str(free), "--grpc-port", "0"],
                                cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert first == f"Sounding listening on http://127.0.0.1:{free}\n"
            grpc_line = proc.stdout.readline()
            assert grpc_line.startswith("Sounding listening on grpc://127.0.0.1:")
            assert f":{busy}" not in grpc_line
        finally:
            proc.terminate()
            assert proc.wait(30) == 0
