"""A Sentry event (an `event` item, or the body of the store endpoint) becomes an
ErrorEvent. Pure: a parsed JSON object in, a record out."""

from __future__ import annotations

from typing import Any

from sounding.records import ErrorEvent


def decode_event(event: dict[str, Any], now_us: int) -> ErrorEvent:
    raise NotImplementedError  # being written (issue 12)
