"""Scrubber: one project's scrubbing settings compiled, and every decision and change
made with them (what becomes of a key's value, of a text, of a mapping), and whether
anything in a record still unread in its protobuf message may be scrubbed."""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Callable
from typing import Any

import orjson

from model.policy import ScrubSettings
from model.secretnames import ASSIGNMENT, is_secret_name
from processors.scrub.hints import (
    HINT_WORDS,
    Found,
    assignment_hint,
    card_hint,
    credentials_hint,
    email_hint,
    ip_hint,
)
from processors.scrub.rules import (
    BY_NAME,
    CARD,
    CREDENTIALS,
    EMAIL,
    HASH_PREFIX,
    IP_KEYS,
    IPV4,
    IPV6,
    MASK,
    REMOVE,
    ValueRule,
    any_of,
    card,
    globs,
    ipv6,
)

_AT = ord("@")  # a byte in bytes by its value: no TypeError (model/secretnames.py)
# What Scrubber.suspect_any remembers: texts of up to 500 characters, 1,000 of them (at
# most about half a megabyte a scrubber; a scrubber is shared by every project with the
# same settings, and for_policy keeps 256).
_MEMO_TEXT, _MEMO = 500, 1000


class Scrubber:
    """The rules of one project's scrubbing settings, compiled (once: `for_policy`)."""

    def __init__(self, settings: ScrubSettings, hash_key: bytes) -> None:
        self.settings = settings
        self.hash_key = hash_key
        rules: list[ValueRule] = []
        key_rules: list[tuple[re.Pattern[str], str]] = []
        for rule in settings.rules:
            if rule.keys:
                key_rules.append((globs(rule), rule.action))
            else:
                rules.append(ValueRule(re.compile(rule.pattern), rule.action))
        # Custom patterns are searched for as they are (a value is str, never bytes).
        custom = [r.regex for r in rules]
        self._custom: Callable[[str], Any] | None = any_of(custom) if custom else None
        if settings.defaults:
            rules += [ValueRule(CARD, "mask", card, card_hint),
                      ValueRule(CREDENTIALS, "mask", hint=credentials_hint),
                      ValueRule(ASSIGNMENT, "mask", hint=assignment_hint)]
        if settings.emails:
            rules.append(ValueRule(EMAIL, "mask", hint=email_hint))
        if settings.ip_addresses:
            rules += [ValueRule(IPV4, "mask", hint=ip_hint),
                      ValueRule(IPV6, "mask", ipv6, hint=ip_hint)]
        self.value_rules = rules
        self.key_rules = key_rules
        self._keys: dict[str, str | None] = {}
        # Whether scrubbing changes a short text, by the quick tests it is asked.
        self._changes: dict[tuple[str, Found | None], bool] = {}

    @staticmethod
    @functools.lru_cache(maxsize=256)
    def for_policy(settings: ScrubSettings, hash_key: bytes) -> Scrubber:
        return Scrubber(settings, hash_key)

    # Decisions.

    def key_action(self, path: str) -> str | None:
        """What becomes of the value under `path` (a key, dotted below its parents),
        by its own name or its path: the first custom rule that names it, else the
        secret-name rule of the defaults, else (optional) the IP address keys."""
        action = self._keys.get(path, REMOVE)
        if action is not REMOVE:
            return action
        folded = path.lower()
        name = folded.rsplit(".", 1)[-1] if "." in folded else folded
        action = None
        for names, rule_action in self.key_rules:
            if names.fullmatch(folded) or names.fullmatch(name):
                action = rule_action
                break
        if action is None and self.settings.defaults and is_secret_name(name):
            action = BY_NAME
        if action is None and self.settings.ip_addresses and (
                name in IP_KEYS or folded in IP_KEYS):
            action = BY_NAME
        if len(self._keys) < 10_000:
            self._keys[path] = action
        return action

    def found(self, data: bytes, words_in: bytes | None = None) -> Found:
        """Which quick tests `data` (UTF-8, lowercased) passes: the stems it holds, and
        whether it may hold a card number, an IP or an e-mail address. Asked once of a
        whole batch's bytes, so that each record is then asked only for what is there.
        `words_in`: shorter bytes that hold every stem `data` holds, looked in instead
        (the other tests need no lowercasing, so then neither does `data`)."""
        settings = self.settings
        within = data if words_in is None else words_in
        # `find`, not `in` (model/secretnames.py says why).
        find = within.find
        words = tuple(w for w in HINT_WORDS if find(w) >= 0) if settings.defaults else ()
        return (words, settings.defaults and card_hint(data),
                settings.ip_addresses and ip_hint(data), settings.emails and _AT in data)

    def hinted(self, data: bytes, found: Found | None = None) -> bool:
        """Whether `data` (UTF-8, lowercased) may hold what a default or optional rule
        matches: quick tests, in C (see HINT_WORDS); only those `found` names, when
        given (what a batch holds at all)."""
        if found is None:
            settings = self.settings
            found = (HINT_WORDS if settings.defaults else (), settings.defaults,
                     settings.ip_addresses, settings.emails)
        words, card, ip, email = found
        if (card and card_hint(data)) or (ip and ip_hint(data)) or (email and _AT in data):
            return True
        find = data.find
        for word in words:
            if find(word) >= 0:
                return True
        return False

    def found_in(self, value: Any) -> Found | None:
        """What the quick tests find in `value`'s JSON (a dict or a list), at once, in
        C; None when they cannot tell (custom rules need its keys and text)."""
        if self.key_rules or self._custom is not None:
            return None
        try:
            data = orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            return None
        return self.found(data.lower())

    def clean(self, value: Any, within: Found | None = None) -> bool:
        """Whether nothing in `value` (a dict or a list) can be scrubbed, by the quick
        tests on its JSON: only those that `within` (what a mapping holding it passed)
        names, when given."""
        if within is None:
            found = self.found_in(value)
            return found is not None and not any(found)
        try:
            data = orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            return False
        return not self.hinted(data.lower(), within)

    def shallow(self, mapping: dict[str, Any]) -> dict[str, Any]:
        """`mapping` scrubbed as `mapping` does, but each value that is a dict or a
        list and `clean` left unwalked, and each text asked only the quick tests that
        the whole mapping passed: an error's context is mostly such parts."""
        found = self.found_in(mapping)
        if found is not None and not any(found):
            return mapping
        removed: list[str] = []
        for key, item in mapping.items():
            action = self.key_action(str(key))
            if action is not None:
                new = self.apply(action, item)
            elif type(item) in (dict, list) and self.clean(item, found):
                continue
            else:
                new = self.value(item, str(key), found)
            if new is REMOVE:
                removed.append(key)
            elif new is not item:
                mapping[key] = new
        for key in removed:
            del mapping[key]
        return mapping

    @property
    def has_custom(self) -> bool:
        return self._custom is not None

    def suspect(self, text: str, found: Found | None = None) -> bool:
        """Whether a value rule may match in `text` (the rules then decide); only the
        quick tests `found` names, when given."""
        if self.hinted(text.lower().encode("utf-8", "surrogatepass"), found):
            return True
        return self._custom is not None and self._custom(text) is not None

    # Changes.

    def hashed(self, value: Any) -> str:
        text = value if isinstance(value, str) else repr(value)
        digest = hmac.new(self.hash_key, text.encode("utf-8", "surrogatepass"),
                          hashlib.sha256).hexdigest()
        return HASH_PREFIX + digest[:20]

    def apply(self, action: str, value: Any) -> Any:
        if action == BY_NAME:
            # A number or a flag is no secret, whatever its name (`input_tokens`, a
            # `session_count`); text, and anything holding text, is masked.
            return value if value is None or type(value) in (bool, int, float) else MASK
        if action == "mask":
            return MASK
        if action == "hash":
            return self.hashed(value)
        return REMOVE

    def text(self, text: str, found: Found | None = None) -> str:
        """`text` with every part a value rule matches masked, hashed or removed."""
        if found is not None and not any(found) and self._custom is None:
            return text  # nothing the quick tests look for is there
        data = text.lower().encode("utf-8", "surrogatepass")
        for rule in self.value_rules:
            if rule.hint is None or rule.hint(data, found):
                text = rule.regex.sub(functools.partial(self._replace, rule), text)
        return text

    def _replace(self, rule: ValueRule, match: re.Match[str]) -> str:
        if rule.check is not None and not rule.check(match):
            return match.group(0)
        group = match.lastindex or 0
        part = match.group(group)
        replaced = "" if rule.action == "remove" else \
            self.hashed(part) if rule.action == "hash" else MASK
        start, end = match.start(group) - match.start(0), match.end(group) - match.start(0)
        whole = match.group(0)
        return whole[:start] + replaced + whole[end:]

    def value(self, value: Any, path: str, found: Found | None = None) -> Any:
        """`value` scrubbed (a copy where it changed; REMOVE when its key's rule says so)."""
        kind = type(value)
        if kind is str:
            return self.text(value, found)
        if kind is dict:
            return self.mapping(value, path, found)
        if kind is list or kind is tuple:
            items = [self.value(item, path, found) for item in value]
            # A [name, value] pair (Sentry's form of headers and query strings).
            if len(items) == 2 and type(items[0]) is str:
                action = self.key_action(f"{path}.{items[0]}" if path else items[0])
                if action is not None:
                    replaced = self.apply(action, items[1])
                    return [items[0], "" if replaced is REMOVE else replaced]
            return items
        return value

    def mapping(self, mapping: dict[str, Any], path: str = "", found: Found | None = None
                ) -> dict[str, Any]:
        """`mapping` scrubbed in place (and returned)."""
        removed: list[str] = []
        for key, item in mapping.items():
            where = f"{path}.{key}" if path else str(key)
            action = self.key_action(where)
            new = self.apply(action, item) if action is not None else \
                self.value(item, where, found)
            if new is REMOVE:
                removed.append(key)
            elif new is not item:
                mapping[key] = new
        for key in removed:
            del mapping[key]
        return mapping

    # Protobuf, unread: whether anything in a message (a span, a log record) may be
    # scrubbed; a yes is decided exactly on the values read out.

    def custom_suspects(self, pairs: list[Any], values: tuple[Any, ...] = ()) -> bool:
        """With custom rules, whose patterns and globs need the text and the keys:
        whether any of these KeyValues (lists `pairs`) or AnyValues may be scrubbed."""
        if self._custom is None and not self.key_rules:
            return False
        return any(self.suspect_pairs(p) for p in pairs) \
            or any(self.suspect_any(v) for v in values)

    def suspect_pairs(self, pairs: Any, found: Found | None = None) -> bool:
        """Whether scrubbing would change any of these KeyValues: exact for a text or a
        scalar value, so that a record whose bytes only looked suspect (a statement
        naming a `sessions` table) stays unread and is stored as it came."""
        for kv in pairs:
            action = self.key_action(kv.key)
            if action is not None:
                value = kv.value
                if action != BY_NAME or value.WhichOneof("value") in (
                        "string_value", "array_value", "kvlist_value", "bytes_value"):
                    return True
            elif self.suspect_any(kv.value, found):
                return True
        return False

    def suspect_any(self, value: Any, found: Found | None = None) -> bool:
        which = value.WhichOneof("value")
        if which == "string_value":
            text = value.string_value
            if len(text) > _MEMO_TEXT:
                return self.suspect(text, found) and self.text(text, found) != text
            # Remembered: a span named by its bytes (a statement on a `sessions`
            # table) comes back with the same values request after request.
            key = (text, found)
            changed = self._changes.get(key)
            if changed is None:
                changed = self.suspect(text, found) and self.text(text, found) != text
                if len(self._changes) >= _MEMO:
                    self._changes.clear()
                self._changes[key] = changed
            return changed
        if which == "kvlist_value":
            return True  # keys below the top need their paths: read it
        if which == "array_value":
            return any(self.suspect_any(v, found) for v in value.array_value.values)
        return False

