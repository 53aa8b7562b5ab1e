"""Which installation of each real client a test drives: the one place that says so.

A test that runs a real SDK or CLI takes its interpreter or its npm folder from here,
never from `sys.executable` or a path of its own, and says which clients it drives with
`pytest.mark.clients(...)` (the names below). Two things follow:

- `make test` runs every such test against the locked versions: sentry-sdk 3.x and the
  OpenTelemetry Python SDK in .venv (requirements/test.txt), sentry-sdk 2.x in an
  environment of its own (requirements/sentry-sdk-2.txt: the two majors cannot share
  one, and each test application is written for one of them), and the npm packages of
  tests/js at their package-lock.json versions.
- `make test-clients` (tests/support/matrix.py) installs each client's newest release
  into .clients/, points the variables below at it, and runs the same tests, marked for
  that client, one client at a time (`pytest --client NAME`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SENTRY_SDK_2 = "sentry-sdk-2"  # the Python SDK's last 2.x release, its own environment
SENTRY_SDK_3 = "sentry-sdk-3"  # the Python SDK's 3.x, in .venv
OPENTELEMETRY_PYTHON = "opentelemetry-python"  # the OpenTelemetry Python SDK and exporters
SENTRY_JAVASCRIPT = "sentry-javascript"  # @sentry/node and @sentry/browser (one version)
SENTRY_CLI = "sentry-cli"  # @sentry/cli and @sentry/vite-plugin
OPENTELEMETRY_JS = "opentelemetry-js"  # the OpenTelemetry JavaScript SDK and exporters
OIDC_PROVIDER = "oidc-provider"  # the OpenID provider the single sign-on tests log in with
PYTHON_CLIENTS = (SENTRY_SDK_2, SENTRY_SDK_3, OPENTELEMETRY_PYTHON)
JS_CLIENTS = (SENTRY_JAVASCRIPT, SENTRY_CLI, OPENTELEMETRY_JS, OIDC_PROVIDER)
CLIENTS = (*PYTHON_CLIENTS, *JS_CLIENTS)

# The locked environments, where no variable points elsewhere.
_LOCKED_PYTHON = {SENTRY_SDK_2: REPO / ".venvs" / "sentry-sdk-2" / "bin" / "python"}
LOCKED_JS = REPO / "tests" / "js"


def env_name(client: str) -> str:
    """The variable that points a client's tests at another installation (matrix.py)."""
    return "SOUNDING_CLIENT_" + client.upper().replace("-", "_")


def python(client: str) -> str:
    """The interpreter a test application written for `client` runs with."""
    if client not in PYTHON_CLIENTS:
        raise ValueError(f"{client!r} is not a Python client: one of {PYTHON_CLIENTS}")
    chosen = os.environ.get(env_name(client))
    if chosen:
        return chosen
    locked = _LOCKED_PYTHON.get(client)
    if locked is None:
        return sys.executable
    if not locked.exists():
        # A clear failure, not a skip: a missing environment must not pass unnoticed.
        raise RuntimeError(f"{locked} is missing: run `make test-deps`")
    return str(locked)


def js_dir() -> Path:
    """The folder of tests/js's scripts whose node_modules a JavaScript test runs: the
    locked one, or the newest releases' copy of it (matrix.py). Every JavaScript
    client of one run comes from the same folder."""
    chosen = os.environ.get("SOUNDING_CLIENT_JS")
    return Path(chosen) if chosen else LOCKED_JS
