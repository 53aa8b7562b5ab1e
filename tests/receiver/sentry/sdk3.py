"""sentry-sdk 3's applications (sdk3_app.py: spans; sdk3_telemetry_app.py: an error,
logs and metrics in a span) run as subprocesses, in the environment that
tests/support/clients.py names for sentry-sdk 3."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support import clients

HERE = Path(__file__).resolve().parent


def run_sdk3_app(server_dsn: str, app: str = "sdk3_app.py") -> dict[str, Any]:
    """`app` sending to `server_dsn`; the JSON object it printed last."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTRY", "OTEL_"))}
    done = subprocess.run([clients.python(clients.SENTRY_SDK_3), str(HERE / app)],
                          env={**env, "SENTRY_DSN": server_dsn}, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if "sdk" in result:
        assert result["sdk"].startswith("3."), result["sdk"]
    return result
