"""The exit watch (sounding/exitwatch.py) in a real process: a thread that never
ends would hold the interpreter's exit forever; armed, the process exits 1 within
its grace, names the thread and prints where it is stuck. A process that ends on
its own is not touched."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HANGS = """
import logging, threading
from sounding import exitwatch
logging.basicConfig(level=logging.INFO)
def stuck_forever():
    threading.Event().wait()
threading.Thread(target=stuck_forever, name="stuck-poller").start()
exitwatch.arm(0.5)
"""

ENDS = """
from sounding import exitwatch
exitwatch.arm(30)
print("done", flush=True)
"""


def run(code: str) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    return done, time.monotonic() - began


def test_a_thread_that_holds_the_exit_is_named_its_stack_shown_and_the_exit_is_1() -> None:
    done, took = run(HANGS)
    assert done.returncode == 1
    assert took < 20  # not the subprocess timeout: the watch ended it
    assert "exit is still waiting 0.5 s after stopping, on stuck-poller" in done.stderr
    assert "in stuck_forever" in done.stderr  # faulthandler's frame line of that thread


def test_a_process_that_exits_by_itself_is_not_held_by_the_watch() -> None:
    done, took = run(ENDS)
    assert done.returncode == 0
    assert done.stdout == "done\n"
    assert took < 20  # the watch's 30 s sleep does not keep it alive: a daemon
    assert "exit is still waiting" not in done.stderr
