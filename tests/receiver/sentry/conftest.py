"""What the real Python sentry-sdk sends, run once for the decoder's test files."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.receiver.sentry.events import CLIENT
from tests.support import clients


@pytest.fixture(scope="package")
def sdk() -> dict[str, Any]:
    """What the real Python SDK sent: {"events": [chained exception, message, logged
    error, exception with a fingerprint], "otel_exception": {...}}."""
    python = clients.python(clients.SENTRY_SDK_2)
    out = subprocess.run([python, str(CLIENT)], capture_output=True, text=True,
                         check=True, timeout=60)
    captured: dict[str, Any] = json.loads(out.stdout)
    assert len(captured["events"]) == 4
    return captured
