"""The locks of requirements/ against pyproject.toml, and the environment against the
lock: what `make run` and `make test` install is exactly what is committed.

A lock disagrees with pyproject.toml when a package pyproject.toml asks for is not
locked, is locked at a version its range excludes, or is locked as asked for although
pyproject.toml no longer asks for it. `make lock` mends all three."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support.clients import REPO
from tests.support.lockfile import locked

REQ = REPO / "requirements"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
def asked(*extras: str) -> list[Requirement]:
    """pyproject.toml's requirements, with those of `extras`."""
    project = PYPROJECT["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for extra in extras:
        wanted += [Requirement(r) for r in project["optional-dependencies"][extra]]
    return wanted


def disagreements(lock: Path, wanted: list[Requirement]) -> list[str]:
    pins = locked(lock)
    problems = []
    names = set()
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        names.add(name)
        if name not in pins:
            problems.append(f"{requirement} is not in {lock.name}")
        elif not requirement.specifier.contains(pins[name][0], prereleases=True):
            problems.append(f"{lock.name} has {name}=={pins[name][0]}, outside {requirement}")
    problems += [f"{lock.name} locks {name} for pyproject.toml, which no longer asks for it"
                 for name, pin in pins.items() if pin[3] and name not in names]
    problems += [f"{lock.name}: {name} has no hash" for name, pin in pins.items() if not pin[2]]
    return problems


@pytest.mark.parametrize(("lock", "extras"), [("run.txt", ()), ("test.txt", ("test",))])
def test_the_lock_holds_what_pyproject_asks_for(lock: str, extras: tuple[str, ...]) -> None:
    assert disagreements(REQ / lock, asked(*extras)) == []


def test_a_lock_that_disagrees_is_caught(tmp_path: Path) -> None:
    """The check itself: a range that excludes the locked version, a package not
    locked, and one locked for pyproject.toml that it no longer asks for."""
    test = (REQ / "test.txt").read_text()
    tornado = locked(REQ / "run.txt")["tornado"][0]
    wanted = [r for r in asked("test") if canonicalize_name(r.name) != "pyyaml"]
    wanted = [Requirement(f"tornado>{tornado}") if r.name == "tornado" else r for r in wanted]
    wanted.append(Requirement("left-pad>=1"))
    lock = tmp_path / "test.txt"
    lock.write_text(test)
    assert sorted(disagreements(lock, wanted)) == sorted([
        f"test.txt has tornado=={tornado}, outside tornado>{tornado}",
        "left-pad>=1 is not in test.txt",
        "test.txt locks pyyaml for pyproject.toml, which no longer asks for it"])


def test_the_locks_agree_on_every_version_they_share() -> None:
    """run.txt and the sentry-sdk 2 environment take test.txt's versions (`make lock`
    compiles them against it), but for the SDK itself."""
    test = locked(REQ / "test.txt")
    for lock in ("run.txt", "sentry-sdk-2.txt"):
        for name, (version, *_) in locked(REQ / lock).items():
            if name == "sentry-sdk":
                continue
            assert name in test and test[name][0] == version, (lock, name, version)
    assert locked(REQ / "sentry-sdk-2.txt")["sentry-sdk"][0].major == 2
    assert test["sentry-sdk"][0].major == 3


def test_this_environment_is_the_lock() -> None:
    """Every package test.txt locks for this platform is installed at its version, so
    `make test` ran on what is committed (and `make run`, from run.txt, a subset)."""
    environment = default_environment()
    wrong = []
    for name, (version, markers, _, _) in locked(REQ / "test.txt").items():
        if markers and not Requirement(f"x; {markers}").marker.evaluate(environment):  # type: ignore[union-attr]
            continue
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            wrong.append(f"{name} is not installed")
            continue
        if installed != version:
            wrong.append(f"{name} {installed} is installed, {version} is locked")
    assert wrong == []


def test_the_image_and_the_makefile_install_from_the_lock() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "requirements/run.txt" in dockerfile and "--require-hashes" in dockerfile
    makefile = (REPO / "Makefile").read_text()
    for lock in ("run.txt", "test.txt", "sentry-sdk-2.txt"):
        assert re.search(rf"\$\(PIP\) -r \$\(REQ\)/{re.escape(lock)}", makefile), lock


def test_the_client_table_names_the_locked_versions() -> None:
    """docs/development.md's table of the clients we test with says the versions the
    locks hold: a `make lock` or an npm upgrade that moves one fails here until the
    table says so."""
    doc = (REPO / "docs" / "development.md").read_text()
    rows = {line.split("|")[1].strip(" `"): line for line in doc.splitlines()
            if line.startswith("| `")}
    test, sdk2 = locked(REQ / "test.txt"), locked(REQ / "sentry-sdk-2.txt")
    npm = json.loads((REPO / "tests" / "js" / "package.json").read_text())["dependencies"]
    expected = {
        "sentry-sdk-2": [f"sentry-sdk {sdk2['sentry-sdk'][0]}"],
        "sentry-sdk-3": [f"sentry-sdk {test['sentry-sdk'][0]}"],
        "opentelemetry-python": [f"opentelemetry-sdk {test['opentelemetry-sdk'][0]}"],
        "sentry-javascript": [f"{npm['@sentry/node']}"],
        "sentry-cli": [f"@sentry/cli {npm['@sentry/cli']}",
                       f"@sentry/vite-plugin {npm['@sentry/vite-plugin']}"],
        "opentelemetry-js": [
            f"@opentelemetry/sdk-trace-base {npm['@opentelemetry/sdk-trace-base']}"],
        "oidc-provider": [f"oidc-provider {npm['oidc-provider']}"],
    }
    assert npm["@sentry/node"] == npm["@sentry/browser"]
    for client, versions in expected.items():
        assert client in rows, client
        for version in versions:
            assert version in rows[client], (client, version)


def test_npm_ci_takes_every_version_from_the_lock() -> None:
    """tests/js: package.json pins each tool exactly, package-lock.json records the
    same, and every package it installs (the transitive ones too) has its version and
    integrity hash, so that `npm ci` installs exactly those or refuses."""
    js = REPO / "tests" / "js"
    wanted = json.loads((js / "package.json").read_text())["dependencies"]
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in wanted.values()), wanted
    lock = json.loads((js / "package-lock.json").read_text())
    assert lock["lockfileVersion"] >= 2
    packages = lock["packages"]
    assert packages[""]["dependencies"] == wanted
    unpinned = [name for name, entry in packages.items()
                if name and not entry.get("link")
                and not (entry.get("version") and entry.get("integrity"))]
    assert unpinned == []
    assert len(packages) > len(wanted)  # the transitive ones are there
