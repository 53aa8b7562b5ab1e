"""Repeated server errors, logged once per kind per interval with a count.

A server error that a client can provoke at will (a bug one body reaches, a store
that keeps failing) would otherwise write its traceback once per request: 2.2 KB
at ERROR per request, megabytes of log a second, the one useful line buried and
the disk filling. So every record at ERROR and above, and every record carrying a
traceback, passes through one filter on the process's log handlers:

- the first record of a kind is logged as it is, traceback included, and opens a
  window of `interval` seconds;
- further records of that kind within the window are counted, not logged;
- when the window ends, one line says "N more like this in the last S s"; the
  next record of the kind opens a new window the same way.

A kind is where the error comes from, not what it says: the logger, the exception
type and the innermost frame it was raised in (or, without a traceback, the
logger and the message template). Messages differ per request (they name the
request); kinds come from code locations, so there are few of them.

Installed on the root handlers by `sounding serve` and by the writer process, so
every logger is covered without each call site knowing.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_INTERVAL = 60.0
# Kinds come from code locations, so a handful is usual; past this many windows at
# once, new kinds share one window rather than grow the table.
MAX_KINDS = 256
_OVERFLOW = ("<other kinds>",)
_SUMMARY = "_sounding_throttle_summary"

Kind = tuple[Any, ...]


@dataclass(slots=True)
class _Window:
    ends: float
    first: logging.LogRecord
    suppressed: int = 0
    timer: threading.Timer | None = None


def kind_of(record: logging.LogRecord) -> Kind:
    """(logger, exception type, innermost file:line) or (logger, message template)."""
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        tb = exc.__traceback__
        where = ""
        while tb is not None:
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
            tb = tb.tb_next
        return (record.name, type(exc).__module__, type(exc).__qualname__, where)
    return (record.name, record.levelno, str(record.msg))


class RepeatFilter(logging.Filter):
    """Passes the first record of each kind per window; counts and summarises the rest."""

    def __init__(self, interval: float = DEFAULT_INTERVAL,
                 emit: Callable[[logging.LogRecord], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, *,
                 kind: Callable[[logging.LogRecord], Kind] = kind_of,
                 min_level: int = logging.ERROR) -> None:
        super().__init__()
        self.interval = interval
        self.emit = emit
        self.clock = clock
        # What makes records alike, and the level from which they are throttled: the
        # refused-requests log (receiver/refusals.py) throttles INFO by its own kinds.
        self.kind = kind
        self.min_level = min_level
        self._windows: dict[Kind, _Window] = {}
        self._lock = threading.Lock()
        # The filter sits on every handler, so each record is asked once per handler:
        # the answer given for it first is given again (a second handler must not see
        # the first record of a window as a repeat, nor count one twice).
        # Weakly: a record's traceback holds its frames.
        self._last: tuple[weakref.ref[logging.LogRecord] | None, bool] = (None, True)

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _SUMMARY, False):
            return True
        if record.levelno < self.min_level and not record.exc_info:
            return True
        kind = self.kind(record)
        now = self.clock()
        with self._lock:
            last, verdict = self._last
            if last is not None and last() is record:
                return verdict
            verdict = self._decide(kind, record, now)
            self._last = (weakref.ref(record), verdict)
            return verdict

    def suppressed(self, kind: Kind) -> bool:
        """Count one record of `kind` if its window is open (True: do not log it),
        without a record being made: a caller logging at a client's rate asks this
        first and skips the cost of a record (the caller's frame looked up, the
        message formatted) for all but the first of each window."""
        now = self.clock()
        with self._lock:
            window = self._windows.get(kind)
            if window is None or now >= window.ends:
                return False
            self._count(kind, window, now)
            return True

    def _count(self, kind: Kind, window: _Window, now: float) -> None:
        window.suppressed += 1
        if window.timer is None and self.emit is not None:
            # Summarised when the window ends even if the kind never comes back.
            window.timer = threading.Timer(window.ends - now, self._close, (kind, window))
            window.timer.daemon = True
            window.timer.start()

    def _decide(self, kind: Kind, record: logging.LogRecord, now: float) -> bool:
        """Whether `record` is logged; called with the lock held."""
        window = self._windows.get(kind)
        if window is None and len(self._windows) >= MAX_KINDS:
            # Windows that ended with nothing to summarise have no timer to remove them.
            self._windows = {k: w for k, w in self._windows.items()
                             if now < w.ends or w.timer is not None}
        if window is None and len(self._windows) >= MAX_KINDS:
            kind = _OVERFLOW
            window = self._windows.get(kind)
        if window is None or now >= window.ends:
            self._windows[kind] = _Window(now + self.interval, record)
            return True
        self._count(kind, window, now)
        return False

    def _close(self, kind: Kind, window: _Window) -> None:
        with self._lock:
            if self._windows.get(kind) is window:
                del self._windows[kind]
            suppressed, window.suppressed = window.suppressed, 0
        if suppressed and self.emit is not None:
            self.emit(summary(window.first, suppressed, self.interval))

    def flush(self) -> None:
        """Summarise every open window now (at exit: nothing counted is lost)."""
        with self._lock:
            windows = list(self._windows.items())
        for kind, window in windows:
            if window.timer is not None:
                window.timer.cancel()
            self._close(kind, window)


def summary(first: logging.LogRecord, count: int, interval: float) -> logging.LogRecord:
    """One line, no traceback, naming the first record of the window."""
    text = first.getMessage().splitlines()[0] if first.getMessage() else first.name
    if first.exc_info and first.exc_info[1] is not None:
        exc = first.exc_info[1]
        text = f"{text} ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    record = logging.LogRecord(first.name, first.levelno, first.pathname, first.lineno,
                               "%s: %d more like this in the last %.0f s",
                               (text, count, interval), None)
    setattr(record, _SUMMARY, True)
    return record


_installed: RepeatFilter | None = None


def install(interval: float = DEFAULT_INTERVAL) -> RepeatFilter:
    """Throttle every handler of the root logger (call after logging.basicConfig)."""
    global _installed
    root = logging.getLogger()

    def emit(record: logging.LogRecord) -> None:
        for handler in root.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)

    if _installed is not None:
        for handler in root.handlers:
            handler.removeFilter(_installed)
        _installed.flush()
    throttle = RepeatFilter(interval, emit)
    for handler in root.handlers:
        handler.addFilter(throttle)
    atexit.register(throttle.flush)
    _installed = throttle
    return throttle


def interval() -> float:
    """The installed throttle's interval, handed to child processes (the writer)."""
    return _installed.interval if _installed is not None else DEFAULT_INTERVAL
