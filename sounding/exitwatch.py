"""After a clean stop the process must end. Records are committed by then, but a
thread left running (a call still in the executor, a library's poller) keeps the
interpreter from exiting, and a supervisor then waits out its timeout and kills
the process with nothing said. So once the service has stopped, a watch waits a
little and, if the process is still here, names the threads it waits on, prints
every thread's stack and exits 1: the hang is seen, and bounded."""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
import threading
import time

log = logging.getLogger("sounding")

GRACE_S = 10.0  # well under systemd's 90 s and Kubernetes' 30 s stop timeouts


def arm(grace_s: float = GRACE_S) -> threading.Thread:
    """Start the watch; it exits the process 1 if it is still alive `grace_s` from now."""
    def watch() -> None:
        time.sleep(grace_s)
        waiting = sorted(t.name for t in threading.enumerate()
                         if t.is_alive() and t is not threading.current_thread()
                         and t is not threading.main_thread())
        log.error("exit is still waiting %g s after stopping, on %s; every thread's "
                  "stack follows, then the process exits 1", grace_s,
                  ", ".join(waiting) or "the main thread")
        for handler in logging.getLogger().handlers:
            handler.flush()
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        os._exit(1)

    # A daemon: it never holds the exit up itself.
    thread = threading.Thread(target=watch, name="sounding-exit-watch", daemon=True)
    thread.start()
    return thread
