"""Records still unread in the protobuf message they came in (spans, log records): which
of them may hold anything to scrub, by the quick tests on their encoded bytes, so that
the others stay unread and are stored in the bytes they came in."""

from __future__ import annotations

from typing import Any

from model.records import LogRecord
from processors.scrub.hints import Found
from processors.scrub.scrubber import Scrubber


def unread(records: list[Any]) -> list[Any]:
    """The records still unread in the protobuf message they came in."""
    return [r for r in records if r.otlp is not None and r.untouched]


def suspects(scrubber: Scrubber, records: list[Any]) -> tuple[set[int], Found | None]:
    """Of `records` (spans or log records, unread), the ids of those that may hold
    something to scrub, by the quick tests on their encoded bytes (where every key and
    string is as sent): asked of the whole batch at once, then of each record only
    for what the batch holds (also returned, for the values of those named). Nearly
    always few or none; custom rules add those whose keys or values their globs and
    patterns may match."""
    blobs = [r.otlp.SerializeToString().lower() for r in records]
    found = scrubber.found(b"\0".join(blobs))
    words, card, ip, email = found
    hit: set[int] = set()
    if words or card or ip or email:
        hit = {id(r) for r, blob in zip(records, blobs, strict=True)
               if scrubber.hinted(blob, found)}
    if scrubber.key_rules or scrubber.has_custom:
        hit |= {id(r) for r in records if id(r) not in hit and scrubber.custom_suspects(
            [r.otlp.attributes, *(e.attributes for e in getattr(r.otlp, "events", ()))],
            (r.otlp.body,) if isinstance(r, LogRecord) and r.otlp.HasField("body") else ())}
        return hit, None  # custom rules: every value asked every test
    return hit, found

