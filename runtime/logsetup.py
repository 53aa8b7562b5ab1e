"""How every Sounding process logs: the level, the line format (`text`, or `json`:
one object per line for log shippers), and the throttle of repeated errors
(runtime/logthrottle.py).

The collector configures itself from `logging:`; its child processes (the writer,
the decode workers) are started by runtime/supervisor.py with `child_env()` in
their environment and call `configure_from_env()`, so that every line the
collector's processes write has one form, whatever process or library (Tornado,
grpcio, alembic) wrote it.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from runtime import logthrottle

FORMATS = ("text", "json")
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_ENV = {"level": "SOUNDING_CHILD_LOG_LEVEL", "format": "SOUNDING_CHILD_LOG_FORMAT",
        "repeat_seconds": "SOUNDING_CHILD_LOG_REPEAT_SECONDS"}
_current: dict[str, Any] = {"level": "INFO", "format": "text",
                            "repeat_seconds": logthrottle.DEFAULT_INTERVAL}
# logging.refused_seconds: read by receiver/refusals.py, which logs refused requests.
DEFAULT_REFUSED_SECONDS = 10.0
_refused_seconds = DEFAULT_REFUSED_SECONDS


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, and
    `exception` (the traceback's text) when the record has one. A message holding
    newlines stays on one line: JSON escapes them."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        if record.process and record.processName != "MainProcess":
            entry["process"] = record.processName
        return json.dumps(entry, ensure_ascii=False, default=str)


def formatter(fmt: str) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else logging.Formatter(TEXT)


def configure(level: str = "INFO", fmt: str = "text",
              repeat_seconds: float = logthrottle.DEFAULT_INTERVAL,
              refused_seconds: float = DEFAULT_REFUSED_SECONDS) -> None:
    """One handler on the root logger, to stderr, in `fmt`; every other logger
    (Tornado's, grpcio's, alembic's) propagates to it. Safe to call again."""
    global _refused_seconds
    _refused_seconds = float(refused_seconds)
    root = logging.getLogger()
    for old in list(root.handlers):
        # Ours from an earlier call (its stream may be gone: a test's capture), or
        # basicConfig's: replaced, so there is one handler and one format.
        if getattr(old, "_sounding", False) or (
                type(old) is logging.StreamHandler
                and getattr(old, "stream", None) in (sys.stderr, sys.__stderr__)):
            root.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler._sounding = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    handler.setFormatter(formatter(fmt))
    root.setLevel(str(level).upper())
    logthrottle.install(float(repeat_seconds))
    _current.update(level=str(level).upper(), format=fmt, repeat_seconds=float(repeat_seconds))


def refused_seconds() -> float:
    """How often each kind of refused request is logged (0: never)."""
    return _refused_seconds


def child_env() -> dict[str, str]:
    """The environment a child process configures its logging from."""
    return {_ENV[name]: str(_current[name]) for name in _ENV}


def configure_from_env(environ: Mapping[str, str] | None = None) -> None:
    """In a child process: log as the collector that started it does."""
    env = os.environ if environ is None else environ
    fmt = env.get(_ENV["format"], "text")
    try:
        repeat = float(env.get(_ENV["repeat_seconds"], logthrottle.DEFAULT_INTERVAL))
    except ValueError:
        repeat = logthrottle.DEFAULT_INTERVAL
    configure(env.get(_ENV["level"], "INFO"), fmt if fmt in FORMATS else "text", repeat)
