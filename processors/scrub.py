"""Scrubbing: secrets and personal data taken out of every record of every signal
before anything is stored or forwarded.

Runs first in the pipeline (before `classify`, the exception stages and `grouping`),
so that every later stage sees scrubbed records: an error made from a span event or
a log record is made of scrubbed values, and a fingerprint is computed on scrubbed
text (a message that differed only by a card number is one group). It runs where the
other stages run, on the event loop or in a decode worker, so a large request is
scrubbed off the event loop.

What a project's policy (model/policy.py, carried on the batch) says:
- the default rules, on unless `defaults: false`: a value under a key that names a
  secret (model/secretnames.py, the one rule), a credit-card number (13 to 19 digits,
  spaces or dashes allowed, Luhn-checked), the credentials of `Bearer` and `Basic`
  (in an Authorization header or anywhere in a value) and the value of a secret's name
  given as `name=value` or `name: value` inside text (`?sentry_key=…`,
  `password=…` in a log line) are masked;
- optional rules: e-mail addresses, IP addresses (v4 and v6; and a Sentry event's
  `user.ip_address`), masked;
- custom rules: keys (a name or a dotted path, globs) or a regular expression over
  values, each masked (MASK), hashed (HMAC-SHA-256 with the database's key: stable,
  so a hashed user id still groups and finds its events) or removed.

Where: span attributes, span event attributes, resource attributes, log attributes
and bodies, metric point and exemplar attributes, and of an error its message, its
exceptions' values, params, tags, context (user, request, contexts, breadcrumbs,
extra...) and user id. Not: span and log names, ids, times, stack frames (file,
function and source lines), metric names and values.

Cheap for the records with nothing to scrub, which are nearly all: the rules are
compiled once per policy (cached), a key's decision is cached, and a span or log
record that arrived as protobuf is checked in its message, without reading its
attributes out: a span is read (and then stored re-encoded) only when something in
it is to be scrubbed.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import hmac
import ipaddress
import re
from collections.abc import Callable
from typing import Any

import orjson

from model.component import Processor
from model.policy import DEFAULT, Policy, Rule, ScrubSettings
from model.records import Batch, ErrorEvent, Feedback, LogRecord, MetricPoint, Span
from model.secretnames import ASSIGNMENT, STEMS, is_secret_name

MASK = "[Filtered]"
HASH_PREFIX = "hash:"
_REMOVE: Any = object()  # a key's value to be removed
BY_NAME = "mask by name"  # the default rules' action on a value under a secret's name

CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d])")
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


def _card(match: re.Match[str]) -> bool:
    digits = match.group(0).replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and luhn(digits)


def _ipv6(match: re.Match[str]) -> bool:
    try:
        ipaddress.IPv6Address(match.group(0))
    except ValueError:
        return False
    return True


# What a value must hold for a default rule to match in it, checked on its UTF-8
# bytes lowercased, with C-speed operations only (a search for these alternatives
# with Python's regular expressions, tried at every character, cost more than the
# rest of a span's way through the collector, as bench/scrub_cost.py measured): at
# least 13 digits for a card number; one of these stems for a secret's name, a
# credential or a `name=value` secret. The rules themselves then decide.
DIGITS = b"0123456789"
# Digits to 0, spaces and dashes kept, anything else to x: with the spaces and dashes
# then taken out, 13 zeros in a row are 13 digits that a card number's separators may
# have joined.
_CARD_TABLE = bytes(48 if 48 <= i <= 57 else i if i in (32, 45) else 120 for i in range(256))
_CARD_RUN = b"0" * 13
# The secret names' stems (model/secretnames.py), and the credential schemes.
HINT_WORDS = (*STEMS, b"bearer", b"basic")


# What a batch holds at all (Scrubber.found): stems, card, IP, e-mail.
Found = tuple[tuple[bytes, ...], bool, bool, bool]
NAME_STEMS = tuple(w for w in HINT_WORDS if w not in (b"bearer", b"basic"))


def card_hint(data: bytes, found: Found | None = None) -> bool:
    if found is not None and not found[1]:
        return False
    return _CARD_RUN in data.translate(_CARD_TABLE).replace(b" ", b"").replace(b"-", b"")


def ip_hint(data: bytes, found: Found | None = None) -> bool:
    if found is not None and not found[2]:
        return False
    return (b"." in data or b":" in data) and len(data) != len(data.translate(None, DIGITS))


def email_hint(data: bytes, found: Found | None = None) -> bool:
    return (found is None or found[3]) and b"@" in data


def credentials_hint(data: bytes, found: Found | None = None) -> bool:
    words = (b"bearer", b"basic") if found is None else found[0]
    return (b"bearer" in words and b"bearer" in data) or (b"basic" in words and b"basic" in data)


# The name and its `=` or `:` of model/secretnames.ASSIGNMENT, on lowercased bytes:
# tried only where a stem is found, so that a text naming a `sessions` table costs a
# few finds, not a search of ASSIGNMENT at every character.
_ASSIGNED = re.compile(rb"[\w.-]*[\"']?\s*[=:]")


def assignment_hint(data: bytes, found: Found | None = None) -> bool:
    if b"=" not in data and b":" not in data:
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


class _ValueRule:
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


class Scrubber:
    """The rules of one project's scrubbing settings, compiled (once: `for_policy`)."""

    def __init__(self, settings: ScrubSettings, hash_key: bytes) -> None:
        self.settings = settings
        self.hash_key = hash_key
        rules: list[_ValueRule] = []
        key_rules: list[tuple[re.Pattern[str], str]] = []
        for rule in settings.rules:
            if rule.keys:
                key_rules.append((_globs(rule), rule.action))
            else:
                rules.append(_ValueRule(re.compile(rule.pattern), rule.action))
        # Custom patterns are searched for as they are (a value is str, never bytes).
        custom = [r.regex for r in rules]
        self._custom: Callable[[str], Any] | None = _any_of(custom) if custom else None
        if settings.defaults:
            rules += [_ValueRule(CARD, "mask", _card, card_hint),
                      _ValueRule(CREDENTIALS, "mask", hint=credentials_hint),
                      _ValueRule(ASSIGNMENT, "mask", hint=assignment_hint)]
        if settings.emails:
            rules.append(_ValueRule(EMAIL, "mask", hint=email_hint))
        if settings.ip_addresses:
            rules += [_ValueRule(IPV4, "mask", hint=ip_hint),
                      _ValueRule(IPV6, "mask", _ipv6, hint=ip_hint)]
        self.value_rules = rules
        self.key_rules = key_rules
        self._keys: dict[str, str | None] = {}

    @staticmethod
    @functools.lru_cache(maxsize=256)
    def for_policy(settings: ScrubSettings, hash_key: bytes) -> Scrubber:
        return Scrubber(settings, hash_key)

    # Decisions.

    def key_action(self, path: str) -> str | None:
        """What becomes of the value under `path` (a key, dotted below its parents),
        by its own name or its path: the first custom rule that names it, else the
        secret-name rule of the defaults, else (optional) the IP address keys."""
        action = self._keys.get(path, _REMOVE)
        if action is not _REMOVE:
            return action
        folded = path.lower()
        name = folded.rsplit(".", 1)[-1] if "." in folded else folded
        action = None
        for globs, rule_action in self.key_rules:
            if globs.fullmatch(folded) or globs.fullmatch(name):
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

    def found(self, data: bytes) -> Found:
        """Which quick tests `data` (UTF-8, lowercased) passes: the stems it holds, and
        whether it may hold a card number, an IP or an e-mail address. Asked once of a
        whole batch's bytes, so that each record is then asked only for what is there."""
        settings = self.settings
        words = tuple(w for w in HINT_WORDS if w in data) if settings.defaults else ()
        return (words, settings.defaults and card_hint(data),
                settings.ip_addresses and ip_hint(data), settings.emails and b"@" in data)

    def hinted(self, data: bytes, found: Found | None = None) -> bool:
        """Whether `data` (UTF-8, lowercased) may hold what a default or optional rule
        matches: quick tests, in C (see HINT_WORDS); only those `found` names, when
        given (what a batch holds at all)."""
        if found is None:
            settings = self.settings
            found = (HINT_WORDS if settings.defaults else (), settings.defaults,
                     settings.ip_addresses, settings.emails)
        words, card, ip, email = found
        if (card and card_hint(data)) or (ip and ip_hint(data)) or (email and b"@" in data):
            return True
        for word in words:
            if word in data:
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
            if new is _REMOVE:
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
        return _REMOVE

    def text(self, text: str, found: Found | None = None) -> str:
        """`text` with every part a value rule matches masked, hashed or removed."""
        if found is not None and not any(found) and self._custom is None:
            return text  # nothing the quick tests look for is there
        data = text.lower().encode("utf-8", "surrogatepass")
        for rule in self.value_rules:
            if rule.hint is None or rule.hint(data, found):
                text = rule.regex.sub(functools.partial(self._replace, rule), text)
        return text

    def _replace(self, rule: _ValueRule, match: re.Match[str]) -> str:
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
        """`value` scrubbed (a copy where it changed; _REMOVE when its key's rule says so)."""
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
                    return [items[0], "" if replaced is _REMOVE else replaced]
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
            if new is _REMOVE:
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
            return self.suspect(text, found) and self.text(text, found) != text
        if which == "kvlist_value":
            return True  # keys below the top need their paths: read it
        if which == "array_value":
            return any(self.suspect_any(v, found) for v in value.array_value.values)
        return False


def _globs(rule: Rule) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(key)})" for key in rule.keys))


def _any_of(patterns: list[re.Pattern[str]]) -> Callable[[str], Any]:
    """One search for every pattern."""
    if len(patterns) == 1:
        return patterns[0].search
    try:
        return re.compile("|".join(f"(?:{p.pattern})" for p in patterns)).search
    except re.error:  # a custom pattern with global flags of its own: one search each
        def search(text: str) -> Any:
            return next((m for p in patterns if (m := p.search(text)) is not None), None)
        return search


# Each record kind.

def scrub_resource(scrubber: Scrubber, attributes: dict[str, Any], seen: set[int]) -> None:
    """Resource attributes are shared by the records of one resource: scrubbed once."""
    if id(attributes) not in seen:
        seen.add(id(attributes))
        scrubber.shallow(attributes)


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


def scrub_span(scrubber: Scrubber, span: Span, suspect: bool = True,
               found: Found | None = None) -> None:
    """`suspect`: for a span still unread, whether `suspects` named it (and what its
    batch holds, `found`)."""
    otlp = span.otlp
    if span.untouched and otlp is not None:
        if not suspect:
            return  # most spans: left unread, stored in the bytes they came in
        if scrubber.suspect_pairs(otlp.attributes, found):
            scrubber.mapping(span.attributes)
        if span.has_events() and any(scrubber.suspect_pairs(e.attributes, found)
                                     for e in otlp.events):
            for event in span.events:
                scrubber.mapping(event.get("attributes") or {})
        return
    scrubber.mapping(span.attributes)
    for event in span.events:
        attributes = event.get("attributes")
        if attributes:
            scrubber.mapping(attributes)


def scrub_log(scrubber: Scrubber, record: LogRecord, suspect: bool = True,
              found: Found | None = None) -> None:
    otlp = record.otlp
    if record.untouched and otlp is not None:
        if not suspect:
            return
        if scrubber.suspect_pairs(otlp.attributes, found):
            scrubber.mapping(record.attributes)
        if otlp.HasField("body") and scrubber.suspect_any(otlp.body, found):
            record.body = _kept(scrubber.value(record.body, "body"))
        return
    scrubber.mapping(record.attributes)
    if record.body is not None:
        record.body = _kept(scrubber.value(record.body, "body"))


def scrub_point(scrubber: Scrubber, point: MetricPoint) -> None:
    scrubber.shallow(point.attributes)
    for exemplar in point.exemplars:
        attributes = exemplar.get("attributes")
        if attributes:
            scrubber.mapping(attributes)


def scrub_error(scrubber: Scrubber, error: ErrorEvent) -> None:
    grouping = error.grouping
    values = [e.get("value") for e in error.exceptions or ()]
    texts = [error.message, error.user_id or "", *(v for v in values if isinstance(v, str)),
             *([grouping.message, *(grouping.parts or ())] if grouping is not None else [])]
    # The quick tests asked once of all its texts: each text is then asked only those
    # passed (most errors: none, and no text is searched at all).
    found = None if scrubber.has_custom else \
        scrubber.found("\0".join(texts).lower().encode("utf-8", "surrogatepass"))
    error.message = scrubber.text(error.message, found)
    if error.params:
        scrubber.shallow(error.params)
    if error.tags:
        scrubber.shallow(error.tags)
    if error.context:
        scrubber.shallow(error.context)
    for exception in error.exceptions or ():
        value = exception.get("value")
        if isinstance(value, str):
            exception["value"] = scrubber.text(value, found)
    if error.user_id is not None:
        action = scrubber.key_action("user.id") or scrubber.key_action("user_id")
        if action is not None:
            kept = scrubber.apply(action, error.user_id)
            error.user_id = None if kept is _REMOVE else kept
        else:
            error.user_id = scrubber.text(error.user_id, found)
    if grouping is not None:
        grouping.message = scrubber.text(grouping.message, found)
        if grouping.parts is not None:
            grouping.parts = [scrubber.text(part, found) for part in grouping.parts]


def _kept(value: Any) -> Any:
    return None if value is _REMOVE else value


def scrub_batch(batch: Batch, policy: Policy) -> None:
    scrubber = Scrubber.for_policy(policy.scrub, policy.hash_key)
    seen: set[int] = set()
    if batch.spans:
        hit, found = suspects(scrubber, unread(batch.spans))
        for span in batch.spans:
            scrub_resource(scrubber, span.resource_attributes, seen)
            scrub_span(scrubber, span, id(span) in hit, found)
    if batch.logs:
        hit, found = suspects(scrubber, unread(batch.logs))
        for record in batch.logs:
            scrub_resource(scrubber, record.resource_attributes, seen)
            scrub_log(scrubber, record, id(record) in hit, found)
    for point in batch.metrics:
        scrub_resource(scrubber, point.resource_attributes, seen)
        scrub_point(scrubber, point)
    for error in batch.errors:
        scrub_error(scrubber, error)
    for said in batch.feedback:
        scrub_feedback(scrubber, said)


def scrub_feedback(scrubber: Scrubber, said: Feedback) -> None:
    """User feedback (Sentry's `feedback` and `user_report` items): what the user wrote,
    their name and the page by the value rules; their email by the optional email
    rule, as any other value."""
    said.message = scrubber.text(said.message)
    for name in ("name", "email", "url"):
        value = getattr(said, name)
        if value is not None:
            setattr(said, name, scrubber.text(value))


class ScrubProcessor(Processor):
    """The stage (see the module). A batch that carries no policy (one built outside a
    service, in a test) gets the default one."""

    default_config: dict[str, object] = {}  # the policy: section configures scrubbing

    def process(self, batch: Batch) -> Batch:
        scrub_batch(batch, batch.policy or DEFAULT)
        return batch
