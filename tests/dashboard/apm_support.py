"""What the APM tests share (test_service_map.py, test_performance_issues.py): the
read API and pages as the admin token reads them, and the instrumented apps, run as
subprocesses (apm_app.py, apm_sentry_app.py), each printing what it did as JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.support import clients
from tests.support.server import Server

HERE = Path(__file__).parent
API = "/api/v1/projects/acme"


def get(server: Server, path: str, **params: str) -> requests.Response:
    return requests.get(server.base + path, params=params, timeout=30,
                        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


def api(server: Server, path: str, **params: str) -> Any:
    """The project's read API at `path`, answered 200."""
    response = get(server, f"/api/v1/projects/{server.project}" + path, **params)
    assert response.status_code == 200, response.text
    return response.json()


# Each application's SDK (tests/support/clients.py).
_CLIENTS = {"apm_app.py": clients.OPENTELEMETRY_PYTHON, "apm_sentry_app.py": clients.SENTRY_SDK_2}


def run_app(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([clients.python(_CLIENTS[script]), str(HERE / script), *args],
                          capture_output=True,
                          text=True, timeout=180, cwd=HERE.parent.parent)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
