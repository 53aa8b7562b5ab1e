"""sentry-sdk 3's application (sdk3_app.py) run as a subprocess: the one place that
says which interpreter has sentry-sdk 3. Today it is the tests' own; when the 2.x
apps move to a side environment, `sdk3_python` is what changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

APP = Path(__file__).with_name("sdk3_app.py")


def sdk3_python() -> str:
    """The Python interpreter whose environment has sentry-sdk 3."""
    return sys.executable


def run_sdk3_app(server_dsn: str) -> dict[str, Any]:
    """sdk3_app.py sending to `server_dsn`; what it printed (its ids, its SDK's log)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTRY", "OTEL_"))}
    done = subprocess.run([sdk3_python(), str(APP)], env={**env, "SENTRY_DSN": server_dsn},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["sdk"].startswith("3."), result["sdk"]
    return result
