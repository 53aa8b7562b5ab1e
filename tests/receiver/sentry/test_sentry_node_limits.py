"""@sentry/node from npm (tests/js/send_sentry_limited.js) against a project over its
error limit: after the 429 naming `error`, the SDK stops sending errors (it drops
them itself, as `ratelimit_backoff`) and still sends its transaction."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.receiver.sentry.helpers import KEYS, dsn
from tests.receiver.sentry.test_sentry_node import JS_DIR, run_node
from tests.receiver.test_limits import config, wait_usage
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_JAVASCRIPT)

assert run_node  # its checks that node and @sentry/node are there are reused below


def test_sentry_node_stops_sending_the_limited_category(
        start: Callable[..., Server], sqlite_url: str, tmp_path: Path) -> None:
    server = start(sqlite_url, keys=KEYS,
                   config=config(tmp_path, "        error: {rate: 0.01, burst: 2}"))
    done = subprocess.run(["node", str(JS_DIR / "send_sentry_limited.js"), dsn(server), "6"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    dropped = json.loads(done.stdout)["dropped"]
    # Two accepted, the third refused (X-Sentry-Rate-Limits: error), the other three
    # never sent: the SDK dropped them itself for the rate limit it recorded.
    assert dropped.get("ratelimit_backoff:error") == 3, dropped
    found = wait_usage(server, lambda u: ("span", "accepted") in u
                       and ("error", "rate_limited") in u)
    assert found[("error", "accepted")] == (2, 0)
    assert found[("error", "rate_limited")] == (1, 0)
    assert found[("span", "accepted")][0] >= 1  # the transaction still went
