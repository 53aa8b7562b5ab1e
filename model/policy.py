"""A project's policy for what it sends: which values are scrubbed before anything
is stored or forwarded (processors/scrub/), which errors its inbound filters
refuse (processors/filters.py), and the thresholds of its performance detectors
(model/detectors.py).

The settings are plain frozen values, so that a batch can carry its project's
policy into a decode worker (pickled with the empty batch, a few hundred bytes) and
a stage can cache what it compiles from one. They are read from their mapping form
(the `policy:` section of the configuration, the read API's body, the database row)
by `scrub_settings` and `filter_settings`, which raise ValueError naming the bad
key; the policy extension (extensions/policy.py) decides which policy a project has.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

from model.detectors import DetectorSettings, detector_mapping, detector_settings

ACTIONS = ("mask", "hash", "remove")
MAX_RULES = 100
MAX_PATTERN = 1000


@dataclass(frozen=True, slots=True)
class Rule:
    """A custom rule: values under any of `keys` (a key's name or its dotted path,
    `*` a wildcard, compared lowercased), or the parts of values that `pattern`
    matches, are masked, hashed or removed."""

    action: str
    keys: tuple[str, ...] = ()
    pattern: str = ""


@dataclass(frozen=True, slots=True)
class ScrubSettings:
    # Credit-card numbers (Luhn-checked), secret names (model/secretnames.py),
    # Bearer and Basic credentials, Sounding's own sentry_key: masked.
    defaults: bool = True
    emails: bool = False
    ip_addresses: bool = False
    rules: tuple[Rule, ...] = ()


@dataclass(frozen=True, slots=True)
class FilterSettings:
    localhost: bool = False
    browser_extensions: bool = False
    legacy_browsers: bool = False
    web_crawlers: bool = False
    error_messages: tuple[str, ...] = ()  # globs over the class, the message, "Class: message"
    releases: tuple[str, ...] = ()  # globs over the release
    ip_ranges: tuple[str, ...] = ()  # CIDR blocks of the client's address

    @property
    def any(self) -> bool:
        return (self.localhost or self.browser_extensions or self.legacy_browsers
                or self.web_crawlers or bool(self.error_messages or self.releases
                                             or self.ip_ranges))


@dataclass(frozen=True, slots=True)
class Policy:
    scrub: ScrubSettings = field(default_factory=ScrubSettings)
    filters: FilterSettings = field(default_factory=FilterSettings)
    # The key of the `hash` action's HMAC: one per database (storage/accounts/secrets.py),
    # so that one value hashes alike on every collector and after a restart.
    hash_key: bytes = b""
    # The performance detectors' thresholds (model/detectors.py): read by the writer,
    # which runs them over complete traces (storage/writer/detect.py).
    detectors: DetectorSettings = field(default_factory=DetectorSettings)


DEFAULT = Policy()

# The parts of a policy in its mapping form (the configuration's `policy:` section, the
# read API's body, a stored row's columns), in this order everywhere.
PARTS = ("scrubbing", "filters", "detectors")

SCRUB_KEYS = ("defaults", "emails", "ip_addresses", "rules")
FILTER_KEYS = ("localhost", "browser_extensions", "legacy_browsers", "web_crawlers",
               "error_messages", "releases", "ip_ranges")


def _mapping(path: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{path} must be a mapping, got {type(value).__name__}")
    return value


def _unknown(path: str, given: dict[str, Any], known: tuple[str, ...]) -> None:
    for key in given:
        if key not in known:
            raise ValueError(f"{path}.{key} is not a setting (known: {', '.join(known)})")


def _flag(path: str, given: dict[str, Any], name: str, default: bool) -> bool:
    value = given.get(name, default)
    if not isinstance(value, bool):
        raise ValueError(f"{path}.{name} must be true or false, got {value!r}")
    return value


def _strings(path: str, value: Any, limit: int = MAX_RULES) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{path} must be a list of non-empty strings")
    if len(value) > limit:
        raise ValueError(f"{path} holds {len(value)} items, at most {limit}")
    return tuple(value)


def _rule(path: str, raw: Any) -> Rule:
    given = _mapping(path, raw)
    _unknown(path, given, ("action", "keys", "pattern"))
    action = given.get("action", "mask")
    if action not in ACTIONS:
        raise ValueError(f"{path}.action must be one of {', '.join(ACTIONS)}, got {action!r}")
    keys = tuple(k.lower() for k in _strings(f"{path}.keys", given.get("keys")))
    pattern = given.get("pattern") or ""
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
        raise ValueError(f"{path}.pattern must be a regular expression of at most "
                         f"{MAX_PATTERN} characters")
    if pattern:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{path}.pattern is not a regular expression: {exc}") from exc
        if compiled.match(""):
            raise ValueError(f"{path}.pattern matches the empty string: it would match "
                             "everywhere")
    if bool(keys) == bool(pattern):
        raise ValueError(f"{path} needs either keys or a pattern (one of them)")
    return Rule(action, keys, pattern)


def scrub_settings(raw: Any, path: str = "scrubbing",
                   base: ScrubSettings | None = None) -> ScrubSettings:
    """The scrubbing settings `raw` gives, each one not given taken from `base`; its
    rules come after the base's (a project adds rules to the collector's)."""
    base = base or ScrubSettings()
    given = _mapping(path, raw)
    _unknown(path, given, SCRUB_KEYS)
    rules_raw = given.get("rules") or []
    if not isinstance(rules_raw, list) or len(rules_raw) > MAX_RULES:
        raise ValueError(f"{path}.rules must be a list of at most {MAX_RULES} rules")
    rules = tuple(_rule(f"{path}.rules[{i}]", r) for i, r in enumerate(rules_raw))
    return ScrubSettings(
        defaults=_flag(path, given, "defaults", base.defaults),
        emails=_flag(path, given, "emails", base.emails),
        ip_addresses=_flag(path, given, "ip_addresses", base.ip_addresses),
        rules=base.rules + rules)


def filter_settings(raw: Any, path: str = "filters",
                    base: FilterSettings | None = None) -> FilterSettings:
    """The inbound filters `raw` gives, each one not given taken from `base`."""
    base = base or FilterSettings()
    given = _mapping(path, raw)
    _unknown(path, given, FILTER_KEYS)
    ranges = _strings(f"{path}.ip_ranges", given.get("ip_ranges")) \
        if "ip_ranges" in given else base.ip_ranges
    for block in ranges:
        try:
            ipaddress.ip_network(block, strict=False)
        except ValueError as exc:
            raise ValueError(f"{path}.ip_ranges: {block!r} is not a CIDR block") from exc
    return FilterSettings(
        localhost=_flag(path, given, "localhost", base.localhost),
        browser_extensions=_flag(path, given, "browser_extensions", base.browser_extensions),
        legacy_browsers=_flag(path, given, "legacy_browsers", base.legacy_browsers),
        web_crawlers=_flag(path, given, "web_crawlers", base.web_crawlers),
        error_messages=_strings(f"{path}.error_messages", given.get("error_messages"))
        if "error_messages" in given else base.error_messages,
        releases=_strings(f"{path}.releases", given.get("releases"))
        if "releases" in given else base.releases,
        ip_ranges=ranges)


def scrub_mapping(settings: ScrubSettings) -> dict[str, Any]:
    """The mapping form of `settings`, as the read API shows it."""
    return {"defaults": settings.defaults, "emails": settings.emails,
            "ip_addresses": settings.ip_addresses,
            "rules": [{"action": r.action, **({"keys": list(r.keys)} if r.keys else {}),
                       **({"pattern": r.pattern} if r.pattern else {})}
                      for r in settings.rules]}


def filter_mapping(settings: FilterSettings) -> dict[str, Any]:
    return {name: (list(value) if isinstance(value, tuple) else value)
            for name in FILTER_KEYS for value in (getattr(settings, name),)}


def layered(base: Policy, raw: dict[str, Any], path: str) -> Policy:
    """`base` with the mapping form `raw` ({scrubbing, filters, detectors}, each
    optional) laid over it. Raises ValueError naming the bad key."""
    return Policy(scrub_settings(raw.get("scrubbing"), f"{path}.scrubbing", base.scrub),
                  filter_settings(raw.get("filters"), f"{path}.filters", base.filters),
                  base.hash_key,
                  detector_settings(raw.get("detectors"), f"{path}.detectors", base.detectors))


def policy_mapping(policy: Policy) -> dict[str, Any]:
    """The mapping form of `policy`, as the read API shows the one in force."""
    return {"scrubbing": scrub_mapping(policy.scrub), "filters": filter_mapping(policy.filters),
            "detectors": detector_mapping(policy.detectors)}
