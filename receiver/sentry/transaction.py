"""A Sentry transaction (a `transaction` item) becomes spans. Pure: a parsed JSON
object in, records out."""

from __future__ import annotations

from typing import Any

from sounding.records import Span


def decode_transaction(event: dict[str, Any], now_us: int) -> list[Span]:
    raise NotImplementedError  # being written (issue 12)
