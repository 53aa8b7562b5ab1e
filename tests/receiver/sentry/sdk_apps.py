"""The Python SDK's applications written for one major each (sdk3_app.py: spans;
sdk3_telemetry_app.py and sdk2_telemetry_app.py: an error, logs and metrics in a
request), run as subprocesses in the environment that tests/support/clients.py names
for that major. (sdk_app.py and its scenarios, 2.x's, have their own runner in
test_sdk.py.)"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support import clients

HERE = Path(__file__).resolve().parent


def run_sdk3_app(server_dsn: str, app: str = "sdk3_app.py",
                 client: str = clients.SENTRY_SDK_3) -> dict[str, Any]:
    """`app` sending to `server_dsn` from `client`'s environment; the JSON object it
    printed last (checked to come from that major when it names its SDK's version)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTRY", "OTEL_"))}
    done = subprocess.run([clients.python(client), str(HERE / app)],
                          env={**env, "SENTRY_DSN": server_dsn}, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if "sdk" in result:
        major = "2." if client == clients.SENTRY_SDK_2 else "3."
        assert result["sdk"].startswith(major), result["sdk"]
    return result
