"""A 202 means committed: what was acknowledged survives `kill -9` and SIGTERM.

Clients keep sending while the collector is killed or stopped; they count the
acknowledgements they received, and afterwards every acknowledged span and error
must be in the store. Requests that got no answer may or may not be stored.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from tests.exporters.senders import (
    assert_all_acknowledged_stored,
    join,
    start_senders,
    wait_for_acks,
)
from tests.support.server import Server, start_server


def _descendants(pid: int) -> list[int]:
    """Child processes of `pid`, from /proc (the collector may run helpers)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *_descendants(child)]
    return found


def _wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if Path(f"/proc/{p}").exists()
                 and "zombie" not in Path(f"/proc/{p}/status").read_text()]
    return alive


def test_kill_9_during_ingest_loses_nothing_acknowledged(
        db_url: str, start: Callable[..., Server]) -> None:
    server = start_server(db_url)
    try:
        senders = start_senders(server, count=4)
        # Kill in the middle of sustained traffic: every sender is still sending.
        wait_for_acks(senders, at_least=60)
        helpers = _descendants(server.proc.pid)
        os.kill(server.proc.pid, signal.SIGKILL)
        join(senders)
    finally:
        server.stop()
    assert server.proc.returncode == -signal.SIGKILL
    # The clients were cut off mid-stream, so the kill really hit ongoing ingest.
    assert all(s.connection_errors == 1 for s in senders)
    # A helper process of the killed collector must not outlive it for long.
    assert _wait_gone(helpers) == []

    restarted = start(db_url)
    spans, errors = assert_all_acknowledged_stored(restarted, senders)
    assert spans > 0 and errors > 0
    # And the restarted collector takes data again.
    assert restarted.post("/ingest/errors/batch", {"errors": [{
        "exception_class": "E", "message": "after restart", "backtrace": [],
        "fingerprint": "after"}]}).status_code == 202


def test_sigterm_under_load_drains_and_exits_0(db_url: str) -> None:
    server = start_server(db_url)
    senders = start_senders(server, count=4)
    wait_for_acks(senders, at_least=40)
    code = server.stop(signal.SIGTERM, timeout=60)
    join(senders)
    assert code == 0, server.log()
    assert "Traceback" not in server.log(), server.log()
    assert all(s.connection_errors == 1 for s in senders)
    # Requests that arrived while stopping were refused with 503, never cut off silently
    # with a 5xx other than that.
    assert all(set(s.statuses) <= {202, 503} for s in senders), [s.statuses for s in senders]
    spans, errors = assert_all_acknowledged_stored(server, senders)
    assert spans > 0 and errors > 0
