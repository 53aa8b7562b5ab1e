"""The Dockerfile. Built with `docker build` where a container engine answers
(`docker info`); where none does (these machines: the docker client is there, no
daemon), read by a Dockerfile parser: two stages, the runtime one non-root, /data as
the volume and the SQLite file in it, the receivers' ports exposed, and a HEALTHCHECK
whose own command is run here against a real collector."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser

from receiver.grpc.server import DEFAULTS as GRPC_DEFAULTS
from receiver.http.server import HTTP_DEFAULTS
from tests.support.server import Server

REPO = Path(__file__).resolve().parents[2]


def _instructions() -> list[tuple[str, str]]:
    parsed = DockerfileParser(str(REPO / "Dockerfile"))
    return [(i["instruction"], i["value"]) for i in parsed.structure
            if i["instruction"] != "COMMENT"]


def _runtime() -> list[tuple[str, str]]:
    """The instructions of the last stage."""
    instructions = _instructions()
    last = max(i for i, (name, _) in enumerate(instructions) if name == "FROM")
    return instructions[last:]


def _one(stage: list[tuple[str, str]], name: str) -> str:
    (value,) = [value for instruction, value in stage if instruction == name]
    return value


def test_two_stages_the_runtime_one_installs_the_built_wheels_only() -> None:
    froms = [value for name, value in _instructions() if name == "FROM"]
    assert [f.split()[-1] for f in froms] == ["build", "runtime"]
    runtime = _runtime()
    assert ("COPY", "--from=build /wheels /wheels") in runtime
    install = [v for name, v in runtime if name == "RUN" and "pip install" in v]
    assert install and "--no-index" in install[0]
    # Nothing of the source tree is copied into the runtime stage.
    assert all("--from=build" in v for name, v in runtime if name == "COPY")


def test_the_build_stage_copies_every_package_the_wheel_is_made_of() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in
                pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = {value.split()[0] for name, value in _instructions() if name == "COPY"}
    assert packages <= copied, packages - copied
    ignored = {line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert not (packages | {"pyproject.toml", "README.md"}) & ignored


def test_the_runtime_runs_unprivileged_on_data_with_the_receivers_ports() -> None:
    runtime = _runtime()
    user = _one(runtime, "USER").split(":")
    assert all(part.isdigit() and int(part) != 0 for part in user), user
    assert json.loads(_one(runtime, "VOLUME")) == ["/data"]
    assert "SOUNDING_DATABASE_URL=sqlite:////data/sounding.db" in _one(runtime, "ENV").split()
    exposed = {int(port) for port in _one(runtime, "EXPOSE").split()}
    assert exposed == {HTTP_DEFAULTS["port"], GRPC_DEFAULTS["port"]}
    assert json.loads(_one(runtime, "ENTRYPOINT")) == ["sounding"]
    assert json.loads(_one(runtime, "CMD")) == ["serve"]


def _healthcheck() -> list[str]:
    value = _one(_runtime(), "HEALTHCHECK")
    command = json.loads(value.split(" CMD ", 1)[1])
    assert command[0] == "python"  # the slim image has no curl
    return command


def test_the_healthcheck_command_passes_on_a_healthy_collector_and_fails_without_one(
        start: Callable[..., Server], sqlite_url: str) -> None:
    command = [sys.executable, *_healthcheck()[1:]]
    server = start(sqlite_url)
    port = server.base.rsplit(":", 1)[1]
    healthy = subprocess.run(command, env={"SOUNDING_HTTP_PORT": port}, capture_output=True,
                             timeout=30)
    assert healthy.returncode == 0, healthy.stderr
    server.stop()
    gone = subprocess.run(command, env={"SOUNDING_HTTP_PORT": port}, capture_output=True,
                          timeout=30)
    assert gone.returncode != 0


def _engine() -> str | None:
    docker = shutil.which("docker")
    if docker is None:
        return None
    answer = subprocess.run([docker, "info"], capture_output=True, timeout=30)
    return docker if answer.returncode == 0 else None


def test_the_image_builds_and_runs_non_root() -> None:
    docker = _engine()
    if docker is None:
        pytest.skip("no container engine answers `docker info` here: the Dockerfile is "
                    "checked by the parser tests above instead")
    tag = "sounding-test:deploy"
    subprocess.run([docker, "build", "-t", tag, str(REPO)], check=True, timeout=1800)
    user = subprocess.run([docker, "run", "--rm", "--entrypoint", "id", tag, "-u"],
                          capture_output=True, text=True, check=True, timeout=120)
    assert user.stdout.strip() == "10001"
