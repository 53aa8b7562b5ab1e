"""The quick tests: whether bytes (a value's UTF-8, a record's encoded message, a whole
batch's) may hold what a default or optional rule matches, asked before any rule is
searched for, with C-speed operations only."""

from __future__ import annotations

import re

from model.secretnames import STEMS

# What a value must hold for a default rule to match in it, checked on its UTF-8
# bytes lowercased, with C-speed operations only (a search for these alternatives
# with Python's regular expressions, tried at every character, cost more than the
# rest of a span's way through the collector, as bench/scrub_cost.py measured): at
# least 13 digits for a card number; one of these stems for a secret's name, a
# credential or a `name=value` secret. The rules themselves then decide.
DIGITS = b"0123456789"
# Digits to 0, anything else to x, and spaces and dashes taken out (in the same pass):
# 13 zeros in a row are then 13 digits that a card number's separators may have joined.
_CARD_TABLE = bytes(48 if 48 <= i <= 57 else 120 for i in range(256))
_CARD_RUN = b"0" * 13
# The secret names' stems (model/secretnames.py), and the credential schemes.
HINT_WORDS = (*STEMS, b"bearer", b"basic")


# What a batch holds at all (Scrubber.found): stems, card, IP, e-mail.
Found = tuple[tuple[bytes, ...], bool, bool, bool]
NAME_STEMS = tuple(w for w in HINT_WORDS if w not in (b"bearer", b"basic"))


# Bytes looked for in bytes with `find`, or by their value as one byte (`_DOT in
# data`), never as `b"." in data`: on bytes Python 3.11 then raises and clears a
# TypeError first (model/secretnames.py).
_DOT, _COLON, _AT, _EQUALS = b".:@="


def card_hint(data: bytes, found: Found | None = None) -> bool:
    if found is not None and not found[1]:
        return False
    return data.translate(_CARD_TABLE, b" -").find(_CARD_RUN) >= 0


def ip_hint(data: bytes, found: Found | None = None) -> bool:
    if found is not None and not found[2]:
        return False
    return (_DOT in data or _COLON in data) and len(data) != len(data.translate(None, DIGITS))


def email_hint(data: bytes, found: Found | None = None) -> bool:
    return (found is None or found[3]) and _AT in data


def credentials_hint(data: bytes, found: Found | None = None) -> bool:
    words = (b"bearer", b"basic") if found is None else found[0]
    return (b"bearer" in words and data.find(b"bearer") >= 0) or (
        b"basic" in words and data.find(b"basic") >= 0)


# The name and its `=` or `:` of model/secretnames.ASSIGNMENT, on lowercased bytes:
# tried only where a stem is found, so that a text naming a `sessions` table costs a
# few finds, not a search of ASSIGNMENT at every character.
_ASSIGNED = re.compile(rb"[\w.-]*[\"']?\s*[=:]")


def assignment_hint(data: bytes, found: Found | None = None) -> bool:
    if _EQUALS not in data and _COLON not in data:
        return False
    for stem in NAME_STEMS if found is None else found[0]:
        if stem in (b"bearer", b"basic"):
            continue
        at = data.find(stem)
        while at >= 0:
            if _ASSIGNED.match(data, at + len(stem)):
                return True
            at = data.find(stem, at + 1)
    return False
