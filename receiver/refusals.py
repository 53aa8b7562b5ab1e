"""Refused requests, logged at INFO where an operator looks first: the status, the
endpoint, the reason and the key's id (the first 12 hex digits of its hash, as
`sounding keys list` shows them; never the key), for HTTP and gRPC alike.

A client can be refused at any rate (a revoked key retried in a loop, a flood of
bad bodies), so the log is throttled by kind, (status, endpoint, error kind): the
first refusal of a kind is logged, the others within `logging.refused_seconds`
are counted, and one line then says how many more there were
(runtime/logthrottle.py). /metrics counts every refusal anyway.
"""

from __future__ import annotations

import atexit
import logging

from model.keyhash import key_id
from runtime import logsetup
from runtime.logthrottle import Kind, RepeatFilter

log = logging.getLogger("sounding.refused")
MAX_REASON = 300
_KIND = "_sounding_refusal"
_throttle: RepeatFilter | None = None


def _kind(record: logging.LogRecord) -> Kind:
    return getattr(record, _KIND, (record.name, str(record.msg)))


def _installed(interval: float) -> RepeatFilter:
    global _throttle
    if _throttle is None or _throttle.interval != interval:
        if _throttle is not None:
            log.removeFilter(_throttle)
            _throttle.flush()
        _throttle = RepeatFilter(interval, log.handle, kind=_kind, min_level=logging.INFO)
        log.addFilter(_throttle)
        atexit.register(_throttle.flush)  # the last counts are written, not lost
    return _throttle


def refused(status: int, endpoint: str, exc: BaseException | None, key: str | None) -> None:
    """Log one refusal (throttled). `key` is the key the request presented, if any:
    only its id is written."""
    interval = logsetup.refused_seconds()
    if interval <= 0 or not log.isEnabledFor(logging.INFO):
        return
    kind = (status, endpoint, type(exc).__name__)
    if _installed(interval).suppressed(kind):
        return  # counted: the line saying how many comes when the window ends
    reason = str(exc) if exc is not None else ""
    # One line whatever the client sent: the reason may quote its input.
    reason = " ".join(reason.split())[:MAX_REASON] or f"status {status}"
    log.info("refused %d on %s: %s (key %s)", status, endpoint, reason,
             key_id(key) if key else "none",
             extra={_KIND: kind})
