"""The scrubbing rules' patterns and actions (what processors/scrub/scrubber.py applies):
the default rules' regular expressions and the checks that confirm their matches, the
custom rules' globs and patterns compiled, and what a value becomes."""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from collections.abc import Callable
from typing import Any

from model.policy import Rule
from processors.scrub.hints import Found

MASK = "[Filtered]"
HASH_PREFIX = "hash:"
REMOVE: Any = object()  # a key's value to be removed
BY_NAME = "mask by name"  # the default rules' action on a value under a secret's name

# Digits that letters touch are part of an identifier, not a card number: a trace id
# such as db16144722074802b3… holds a Luhn-valid run one time in ten.
CARD = re.compile(r"(?<![0-9A-Za-z_-])(?:\d[ -]?){12,18}\d(?![0-9A-Za-z_])")
CREDENTIALS = re.compile(r"\b((?:Bearer|Basic)\s+)([A-Za-z0-9._~+/=-]{6,})", re.IGNORECASE)
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}"
                  r"(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])")
IPV6 = re.compile(r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}"
                  r"(?![0-9A-Fa-f:])")
IP_KEYS = frozenset({"ip_address", "client.address", "source.address", "net.peer.ip",
                     "http.client_ip", "net.sock.peer.addr", "network.peer.address"})


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = ord(ch) - 48
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def card(match: re.Match[str]) -> bool:
    digits = match.group(0).replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and luhn(digits)


def ipv6(match: re.Match[str]) -> bool:
    try:
        ipaddress.IPv6Address(match.group(0))
    except ValueError:
        return False
    return True


class ValueRule:
    """A pattern over values: the part it matches (its last group when it has
    groups, so that `Bearer ` stays and only the credential goes) is replaced, when
    `check` (if any) accepts the match. `hint` (if any) tells on a value's lowercased
    UTF-8 whether the pattern can match at all: searched only then."""

    __slots__ = ("regex", "action", "check", "hint")

    def __init__(self, regex: re.Pattern[str], action: str,
                 check: Callable[[re.Match[str]], bool] | None = None,
                 hint: Callable[[bytes, Found | None], bool] | None = None) -> None:
        self.regex = regex
        self.action = action
        self.check = check
        self.hint = hint



def globs(rule: Rule) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(key)})" for key in rule.keys))


def any_of(patterns: list[re.Pattern[str]]) -> Callable[[str], Any]:
    """One search for every pattern."""
    if len(patterns) == 1:
        return patterns[0].search
    try:
        return re.compile("|".join(f"(?:{p.pattern})" for p in patterns)).search
    except re.error:  # a custom pattern with global flags of its own: one search each
        def search(text: str) -> Any:
            return next((m for p in patterns if (m := p.search(text)) is not None), None)
        return search

