"""Server failures caused by a request, logged once per kind per interval with a count.

A client that found a way to make a request fail on the server side can send it a
thousand times a second; a traceback per request would fill the disk with the same
lines. The first occurrence of each kind is logged at once, the rest are counted
and reported in one line when the interval has passed.
"""

from __future__ import annotations

import logging
import time

INTERVAL_SECONDS = 60.0
MAX_KINDS = 256  # kinds are few; a bound all the same, since messages come from input


class ThrottledLog:
    def __init__(self, logger: logging.Logger, interval: float = INTERVAL_SECONDS) -> None:
        self.logger = logger
        self.interval = interval
        self._kinds: dict[str, tuple[float, int]] = {}  # kind: (last logged, suppressed)

    def error(self, kind: str, message: str) -> None:
        now = time.monotonic()
        logged_at, suppressed = self._kinds.get(kind, (-self.interval, 0))
        if now - logged_at < self.interval:
            self._kinds[kind] = (logged_at, suppressed + 1)
            return
        if len(self._kinds) >= MAX_KINDS and kind not in self._kinds:
            self._kinds.clear()
        self._kinds[kind] = (now, 0)
        if suppressed:
            message += f" ({suppressed} more like it in the last {self.interval:.0f} s)"
        self.logger.error("%s", message)
