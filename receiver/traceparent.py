"""W3C Trace Context: the `traceparent` header."""

from __future__ import annotations

import re

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")


def parse_traceparent(header: str | None) -> tuple[str, str] | None:
    """(trace_id, parent span_id) of a valid header; None for anything else.

    Follows the W3C rules: version ff is invalid, all-zero ids are invalid, and a
    future version may append fields after the four we read (version 00 may not).
    """
    if not header:
        return None
    match = _TRACEPARENT.fullmatch(header.strip())
    if match is None:
        return None
    version, trace_id, span_id, _flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest):
        return None
    if trace_id == "0" * 32 or span_id == "0" * 16:
        return None
    return trace_id, span_id
