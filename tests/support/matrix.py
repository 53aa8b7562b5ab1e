"""`make test-clients`: the real-client tests against each client's newest release.

For each client of tests/support/clients.py (or those named on the command line) it
installs the newest release into an environment of its own under .clients/ (a Python
environment with the test lock and then the client upgraded; a copy of tests/js with
only that client's npm packages at `latest`), runs the tests marked for that client
(`pytest --client NAME`) pointed at it, and ends with one table: each client, the
version locked, the version tried, and what the tests said. One client at a time, so
that a failure names the release that caused it.

    python -m tests.support.matrix [CLIENT ...]
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from tests.support import clients
from tests.support.clients import REPO
from tests.support.lockfile import locked

OUT = REPO / ".clients"
REQ = REPO / "requirements"


@dataclass(frozen=True)
class Client:
    name: str
    packages: tuple[str, ...]  # what is upgraded; the first one's version is reported
    newest: str = ""  # the pip requirement of the newest release, when not just the name


PYTHON = {
    clients.SENTRY_SDK_2: Client(clients.SENTRY_SDK_2, ("sentry-sdk",), "sentry-sdk<3"),
    clients.SENTRY_SDK_3: Client(clients.SENTRY_SDK_3, ("sentry-sdk",), "sentry-sdk>=3"),
    clients.OPENTELEMETRY_PYTHON: Client(clients.OPENTELEMETRY_PYTHON, (
        "opentelemetry-sdk", "opentelemetry-api", "opentelemetry-exporter-otlp-proto-http",
        "opentelemetry-exporter-otlp-proto-grpc", "opentelemetry-instrumentation-flask",
        "opentelemetry-instrumentation-requests", "opentelemetry-instrumentation-sqlalchemy",
        "opentelemetry-instrumentation-sqlite3")),
}
JS = {
    clients.SENTRY_JAVASCRIPT: Client(clients.SENTRY_JAVASCRIPT,
                                      ("@sentry/node", "@sentry/browser")),
    clients.SENTRY_CLI: Client(clients.SENTRY_CLI, ("@sentry/cli", "@sentry/vite-plugin")),
    clients.OPENTELEMETRY_JS: Client(clients.OPENTELEMETRY_JS, (
        "@opentelemetry/sdk-trace-base", "@opentelemetry/api", "@opentelemetry/api-logs",
        "@opentelemetry/exporter-logs-otlp-http", "@opentelemetry/exporter-trace-otlp-http",
        "@opentelemetry/resources", "@opentelemetry/sdk-logs")),
    clients.OIDC_PROVIDER: Client(clients.OIDC_PROVIDER, ("oidc-provider",)),
}


class InstallFailed(Exception):
    """A client's newest releases could not be installed: news too (a new release that
    its own siblings refuse, say); the message is the installer's reason."""


def _run(command: list[str], **kwargs: object) -> None:
    print("+", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True,  # type: ignore[call-overload]
                          **kwargs)
    sys.stdout.write(done.stdout)
    sys.stdout.write(done.stderr)
    if done.returncode != 0:
        # npm's and pip's own words for why, without the lines around them.
        said = [line.removeprefix("npm error").strip() for line in done.stderr.splitlines()
                if any(mark in line for mark in ("ERESOLVE", "Could not resolve", "peer ",
                                                 "Found:", "ERROR:", "No matching"))]
        raise InstallFailed("; ".join(dict.fromkeys(said)) or f"{command[0]} exited "
                            f"{done.returncode}")


def python_env(client: Client) -> tuple[dict[str, str], str, str]:
    """A fresh environment with the test lock, then the client's newest release."""
    home = OUT / client.name
    shutil.rmtree(home, ignore_errors=True)
    venv.create(home, with_pip=True)
    python = str(home / "bin" / "python")
    base = REQ / ("sentry-sdk-2.txt" if client.name == clients.SENTRY_SDK_2 else "test.txt")
    _run([python, "-m", "pip", "install", "--quiet", "--require-hashes", "-r", str(base)])
    wanted = [client.newest] if client.newest else list(client.packages)
    _run([python, "-m", "pip", "install", "--quiet", "--upgrade", *wanted])
    first = client.packages[0]
    tried = subprocess.run([python, "-c", "import sys, importlib.metadata as m; "
                            "print(m.version(sys.argv[1]))", first], check=True,
                           capture_output=True, text=True).stdout.strip()
    was = str(locked(base).get(first, ("?",))[0])
    return {clients.env_name(client.name): python}, was, tried


def _js_versions(folder: Path, client: Client) -> str:
    """Each of the client's packages with its version, where they differ; else the one
    version."""
    versions = [_js_version(folder, package) for package in client.packages]
    if len(set(versions)) == 1:
        return versions[0]
    return ", ".join(f"{package} {version}"
                     for package, version in zip(client.packages, versions, strict=True))


def _js_version(folder: Path, package: str) -> str:
    manifest = folder / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text())["version"]) if manifest.exists() else "?"


def js_env(client: Client) -> tuple[dict[str, str], str, str]:
    """A copy of tests/js at its lock, then the client's packages at `latest`."""
    home = OUT / client.name
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(clients.LOCKED_JS, home, ignore=shutil.ignore_patterns("node_modules"))
    _run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=home)
    _run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
          *(f"{package}@latest" for package in client.packages)], cwd=home)
    return ({"SOUNDING_CLIENT_JS": str(home)}, _js_versions(clients.LOCKED_JS, client),
            _js_versions(home, client))


def run_tests(client: str, env: dict[str, str]) -> str:
    """The closing line of pytest over the client's tests."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n",
         os.environ.get("TEST_WORKERS", "3"), "--dist", "loadfile", "--client", client],
        cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True)
    sys.stdout.write(done.stdout[-6000:])
    lines = [line for line in done.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return lines[-1].strip("= ") if lines else f"pytest exited {done.returncode}"


def main(argv: list[str]) -> int:
    chosen = argv or list(clients.CLIENTS)
    unknown = [name for name in chosen if name not in clients.CLIENTS]
    if unknown:
        print(f"unknown clients {unknown}: one of {clients.CLIENTS}", file=sys.stderr)
        return 2
    rows = []
    for name in chosen:
        try:
            env, was, tried = (python_env(PYTHON[name]) if name in PYTHON
                               else js_env(JS[name]))
        except (InstallFailed, subprocess.CalledProcessError) as exc:
            rows.append((name, "?", "?", f"could not install: {exc}"))
            continue
        rows.append((name, was, tried, run_tests(name, env)))
    print("\n| client | locked | newest | tests |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0 if all(re.search(r"\d+ passed", r[3]) and "failed" not in r[3]
                    and "error" not in r[3] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
