"""Records still unread in the protobuf message they came in (spans, log records): which
of them may hold anything to scrub, by the quick tests on their encoded bytes, so that
the others stay unread and are stored in the bytes they came in."""

from __future__ import annotations

import bisect
import itertools
from typing import Any

from model.records import LogRecord, Span
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
    blobs = [r.otlp_bytes().lower() for r in records]
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


# What the quick tests' words (hints.HINT_WORDS: the secret names' stems, the credential
# schemes) are made of, lowercased: letters, `_` and `-`. Every other byte becomes 0, so
# that every occurrence of a word lies within one of the pieces between runs of zeros.
_LETTERS = bytes(i + 32 if 65 <= i <= 90 else i if 97 <= i <= 122 or i in (45, 95) else 0
                 for i in range(256))
_GAP = b"\0" * 4


def suspect_spans(scrubber: Scrubber, spans: list[Span]) -> tuple[set[int], Found | None]:
    """`suspects` of unread spans, with the same answer for less: a batch's spans
    repeat the same keys and values, so the words are looked for in its distinct
    pieces (a sixteenth of its bytes on the bench's payload) rather than in all of
    them, fifteen times over; and a span is named by where a word was found in the
    batch (one search per word, not one per span and word). Only the tests a batch
    passed at all are then asked of each span; a card number, an IP or an e-mail
    address rarely."""
    blobs = [s.otlp_bytes() for s in spans]
    data = b"\0".join(blobs)
    letters = data.translate(_LETTERS)
    found = scrubber.found(data, b"\0".join(set(letters.split(_GAP))))
    words, card, ip, email = found
    hit: set[int] = set()
    if words:
        # Where each span's bytes start in `data`, and where the last one ends.
        starts = [0, *itertools.accumulate(len(blob) + 1 for blob in blobs)]
        for word in words:
            at = letters.find(word)
            while at >= 0:
                i = bisect.bisect_right(starts, at) - 1
                hit.add(id(spans[i]))
                at = letters.find(word, starts[i + 1])  # on from the next span
    if card or ip or email:
        others: Found = ((), card, ip, email)
        hit |= {id(s) for s, blob in zip(spans, blobs, strict=True)
                if id(s) not in hit and scrubber.hinted(blob, others)}
    if scrubber.key_rules or scrubber.has_custom:
        hit |= {id(s) for s in spans if id(s) not in hit and scrubber.custom_suspects(
            [s.otlp.attributes, *(e.attributes for e in s.otlp.events)])}
        return hit, None  # custom rules: every value asked every test
    return hit, found
