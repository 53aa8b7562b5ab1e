"""The `alerts:` section: its defaults and its checks, each error naming the key.

Destinations and rules are lists, so the generic key check (runtime/configcheck.py)
cannot see into them; they are checked here, item by item, with their index in the
path (`alerts.rules[2].on`). A rule that names a destination the section does not
define stops the collector at start rather than dropping alerts later.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from extensions.alerts.admin import check_secrets_key
from extensions.alerts.rules import check_rules
from model.errors import ConfigError
from runtime.configcheck import check_keys, nearest, require_mapping

DEFAULTS: dict[str, Any] = {
    # Seals the credentials of destinations added on the dashboard (32+ characters,
    # the same on every collector of one database); None: none can be added there.
    "secrets_key": None,
    # Base URL of the dashboard as people reach it, for the link in each alert;
    # None: alerts carry no link.
    "public_url": None,
    # [{name, type: webhook|slack|email, ...}]: docs/alerts.md.
    "destinations": [],
    # [{on, destinations: [names], project, env, service, ...}]: rules.py.
    "rules": [],
    # Messages per destination per minute, across every collector; beyond it the
    # alerts due are folded into one digest.
    "rate_per_minute": 10,
    "retry": {
        # Full-jitter exponential backoff: the n-th delay is drawn from
        # [0, min(max_s, first_s * 2**n)]; a delivery still unsent give_up_s after it
        # was created is marked failed.
        "first_s": 1,
        "max_s": 300,
        "give_up_s": 3600,
    },
    # How often the sender looks for alerts to route and deliveries due.
    "poll_s": 1.0,
    # How often the evaluators (deploys, frequency, error rate, latency) run.
    "evaluate_s": 30,
    # Facts and finished deliveries older than this are deleted.
    "keep_days": 30,
    # The after-window a deploy is judged on (storage/queries/deploys.correlate).
    "deploy_window_s": 900,
}

DESTINATION_TYPES = ("webhook", "slack", "email")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
PUBLIC_URL = re.compile(r"https?://[^/\s@?#]+(/[^\s?#]*)?")

# The check of one destination's own keys (url, secret, smtp...), given the item's
# path: the destinations package owns it.
DestinationCheck = Callable[[str, dict[str, Any]], None]


def _number(path: str, value: Any, minimum: float, strict: bool = False) -> None:
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or value < minimum or (strict and value == minimum)):
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        raise ConfigError(f"{path} must be a number {bound}, got {value!r}")


def check(path: str, config: dict[str, Any],
          destination_check: DestinationCheck | None = None) -> None:
    """Refuse a bad `alerts:` section. `destination_check` adds each destination
    type's own checks to the generic ones here."""
    check_keys(path, {k: v for k, v in config.items()
                      if k not in ("destinations", "rules")}, DEFAULTS)
    public = config.get("public_url")
    if public is not None and (not isinstance(public, str) or not PUBLIC_URL.fullmatch(public)):
        raise ConfigError(f"{path}.public_url must be an http(s) URL without user, query "
                          f"or fragment, got {public!r}")
    _number(f"{path}.rate_per_minute", config.get("rate_per_minute"), 1)
    retry = require_mapping(f"{path}.retry", config.get("retry"))
    for key in ("first_s", "max_s", "give_up_s"):
        _number(f"{path}.retry.{key}", retry.get(key), 0, strict=True)
    if retry["max_s"] < retry["first_s"]:
        raise ConfigError(f"{path}.retry.max_s must be >= retry.first_s")
    for key in ("poll_s", "evaluate_s", "keep_days", "deploy_window_s"):
        _number(f"{path}.{key}", config.get(key), 0, strict=True)
    check_secrets_key(path, config)
    names = check_destinations(f"{path}.destinations", config.get("destinations"),
                               destination_check)
    check_rules(f"{path}.rules", config.get("rules"), names)


def check_destinations(path: str, destinations: Any,
                       destination_check: DestinationCheck | None) -> set[str]:
    """The destinations' names, once each is checked."""
    if destinations is None:
        return set()
    if not isinstance(destinations, list):
        raise ConfigError(f"{path} must be a list of destinations")
    names: set[str] = set()
    for index, item in enumerate(destinations):
        item_path = f"{path}[{index}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{item_path} must be a mapping with name and type")
        name = item.get("name")
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise ConfigError(f"{item_path}.name must be 1 to 100 letters, digits, '_', '.' "
                              "or '-'")
        if name in names:
            raise ConfigError(f"{item_path}.name: {name!r} is defined twice")
        names.add(name)
        kind = item.get("type")
        if kind not in DESTINATION_TYPES:
            raise ConfigError(f"{item_path}.type must be one of "
                              f"{', '.join(DESTINATION_TYPES)}, got {kind!r}"
                              f"{nearest(str(kind), DESTINATION_TYPES)}")
        if destination_check is not None:
            destination_check(item_path, item)
    return names
