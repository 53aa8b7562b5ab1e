"""The Logs page's and the logs API's query arguments, read once for both: a value
that cannot be read is a 400 naming its parameter.

- `service`: exact service name;
- `severity`: at least this: a number 0..24 or TRACE, DEBUG, INFO, WARN, ERROR, FATAL;
- `text`: a case-insensitive substring of the body (% and _ match themselves);
- `attr`: `key=value`, repeatable, every one must match (the value as text: a
  string as it is, a number as JSON writes it, true or false);
- `trace_id`: 32 hex digits;
- `range`, `from`, `to`: the time range (dashboard/timerange.py);
- `after`: a cursor (`next_after` of an answer): only the records that follow it,
  oldest first. Without an explicit range, the cursor alone bounds the time.
"""

from __future__ import annotations

import re

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from dashboard.timerange import TimeRange
from storage.queries import logs as lq

DEFAULT_RANGE = "24h"
MAX_ATTRIBUTES = 10
_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")


def log_filter(handler: DashboardHandler) -> tuple[TimeRange, lq.LogFilter]:
    tr = handler.time_range(DEFAULT_RANGE)
    severity = None
    if (raw := handler.arg("severity")) is not None:
        try:
            severity = lq.parse_severity(raw)
        except ValueError as exc:
            raise HTTPError(400, f"'severity' must be {exc}") from exc
    attributes = []
    for raw in handler.get_arguments("attr"):
        if not raw.strip():
            continue
        key, equals, value = raw.partition("=")
        if not equals or not key.strip():
            raise HTTPError(400, "'attr' must be key=value (one per 'attr')")
        attributes.append((key.strip(), value))
    if len(attributes) > MAX_ATTRIBUTES:
        raise HTTPError(400, f"at most {MAX_ATTRIBUTES} 'attr' filters")
    trace_id = handler.arg("trace_id")
    if trace_id is not None and not _TRACE_ID.fullmatch(trace_id):
        raise HTTPError(400, "'trace_id' must be 32 hexadecimal digits")
    after = None
    if (raw := handler.arg("after")) is not None:
        try:
            after = lq.Cursor.parse(raw)
        except ValueError as exc:
            raise HTTPError(400, "'after' must be a cursor (next_after of an answer): "
                                 "<time_ns>.<record key>") from exc
    explicit_range = handler.arg("range") is not None
    bounded = after is None or explicit_range
    return tr, lq.LogFilter(
        start_ns=tr.start_ns if bounded else None, end_ns=tr.end_ns if bounded else None,
        service=handler.arg("service"), min_severity=severity, text=handler.arg("text"),
        attributes=tuple(attributes), trace_id=trace_id.lower() if trace_id else None,
        after=after)
