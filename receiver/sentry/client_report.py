"""Sentry `client_report` items: what an SDK dropped before sending it (its queue was
full, it was sampled out, a rate limit told it to back off), as `discarded_events`
of `{reason, category, quantity}`. They become the project's usage under
`client_discarded`, by category and reason (runtime/usage.py), instead of being
thrown away: the Stats page shows what never arrived, and why.

A report is the SDK's word: a bad one is skipped, never a reason to refuse the
envelope that carries it. Its reason and category are words of Sentry's fixed
vocabularies; anything else is counted as "other", so a client cannot grow the
usage table with names of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from receiver.jsonbody import parse_json
from receiver.sentry.envelope import Envelope

_WORD = re.compile(r"[a-z][a-z0-9_]{0,31}")
MAX_ENTRIES = 100  # per report: an SDK reports a handful
MAX_QUANTITY = 1 << 40


def discarded(envelope: Envelope) -> Iterator[tuple[str, str, int]]:
    """(category, reason, quantity) of each discarded_events entry of the envelope's
    client reports."""
    for item in envelope.items:
        if item.type != "client_report":
            continue
        try:
            report = parse_json(item.payload)
        except Exception:  # noqa: BLE001 - the SDK's bad report: skipped, not refused
            continue
        entries = report.get("discarded_events") if isinstance(report, dict) else None
        if not isinstance(entries, list):
            continue
        for entry in entries[:MAX_ENTRIES]:
            counted = _entry(entry)
            if counted is not None:
                yield counted


def _entry(entry: Any) -> tuple[str, str, int] | None:
    if not isinstance(entry, dict):
        return None
    quantity = entry.get("quantity")
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity <= 0:
        return None
    return _word(entry.get("category"), 16), _word(entry.get("reason"), 64), min(
        quantity, MAX_QUANTITY)


def _word(value: Any, length: int) -> str:
    if isinstance(value, str) and len(value) <= length and _WORD.fullmatch(value):
        return value
    return "other"
