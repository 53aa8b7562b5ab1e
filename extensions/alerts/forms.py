"""The dashboard's alert forms, read into the shapes the `alerts:` section takes:
a destination's config dict (checked by destinations.check) and a rule dict.

Pure: form fields in (one string each; a rule's destinations a list), a dict out
or a ConfigError naming the field. No message here ever holds a submitted URL,
secret or password: those fields are named, never echoed.

`check_rule` is the dashboard's own, minimal check of a rule (its kind, its
destinations among those the project can use, its filters and its condition);
the rules of the configuration file are checked by rules.py, on the same terms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from model.errors import ConfigError

# A destination's name: what a rule names it by, shown in the page and in logs.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
DESTINATION_FIELDS: dict[str, tuple[str, ...]] = {
    "webhook": ("url", "secret"),
    "slack": ("url",),
    "email": ("host", "port", "security", "user", "password", "from", "to"),
}
CRASH_FREE = ("crash_free_sessions", "crash_free_users")
RULE_KINDS = ("new_group", "regression", "deploy_worse", "frequency", "error_rate", "latency",
              *CRASH_FREE, "spike_protection")
CONDITIONS: dict[str, tuple[str, ...]] = {
    "frequency": ("count", "minutes"),
    "error_rate": ("threshold", "minutes"),
    "latency": ("p95_ms", "minutes"),
    **{kind: ("threshold", "minutes", "min_sessions") for kind in CRASH_FREE},
}
FILTERS = ("env", "service")
INTEGERS = ("count", "minutes", "min_sessions")
MAX_MINUTES = 24 * 60
MAX_FILTER = 200


def _field(form: Mapping[str, str], key: str) -> str | None:
    value = (form.get(key) or "").strip()
    return value or None


def destination_config(form: Mapping[str, str]) -> dict[str, Any]:
    """A destination's config from the form: name, type and the fields of that type
    that were filled in (a port as a number, `to` split at commas)."""
    name = _field(form, "name")
    if name is None or not NAME.fullmatch(name):
        raise ConfigError("destination.name must be 1 to 100 letters, digits, '_', '.' or "
                          "'-', starting with a letter or digit")
    kind = _field(form, "type")
    if kind not in DESTINATION_FIELDS:
        raise ConfigError(f"destination.type must be one of {', '.join(DESTINATION_FIELDS)}")
    config: dict[str, Any] = {"name": name, "type": kind}
    for key in DESTINATION_FIELDS[kind]:
        # A secret keeps its spaces: they may be part of it.
        raw = form.get(key) or "" if key in ("secret", "password") else _field(form, key)
        if not raw:
            continue
        if key == "port":
            if not raw.isascii() or not raw.isdigit() or len(raw) > 5:
                raise ConfigError("destination.port must be a port number (1-65535)")
            config[key] = int(raw)
        elif key == "to":
            config[key] = [a.strip() for a in re.split(r"[,\s]+", raw) if a.strip()]
        else:
            config[key] = raw
    return config


def _number(key: str, raw: str) -> int | float:
    try:
        return int(raw) if key in INTEGERS else float(raw)
    except ValueError as exc:
        kind = "an integer" if key in INTEGERS else "a number"
        raise ConfigError(f"rule.{key} must be {kind}") from exc


def rule_config(form: Mapping[str, str], destinations: list[str]) -> dict[str, Any]:
    """A rule from the form: on, destinations, the filters filled in and the
    condition of its kind."""
    on = _field(form, "on") or ""
    rule: dict[str, Any] = {"on": on, "destinations": destinations}
    for key in FILTERS:
        value = _field(form, key)
        if value is not None:
            rule[key] = value
    for key in CONDITIONS.get(on, ()):
        raw = _field(form, key)
        if raw is not None:
            rule[key] = _number(key, raw)
    return rule


def check_rule(rule: dict[str, Any], usable: set[str]) -> None:
    """Refuse a rule that cannot work, naming the field. `usable`: the destination
    names the project's rules may send to."""
    on = rule.get("on")
    if on not in RULE_KINDS:
        raise ConfigError(f"rule.on must be one of {', '.join(RULE_KINDS)}")
    names = rule.get("destinations")
    if not isinstance(names, list) or not names:
        raise ConfigError("rule.destinations must name at least one destination")
    for name in names:
        if name not in usable:
            raise ConfigError(f"rule.destinations: no destination is named {name!r}")
    conditions = CONDITIONS.get(on, ())
    filters = ("env",) if on in CRASH_FREE else FILTERS  # sessions have no service
    for key in rule:
        if key not in ("on", "destinations", *filters, *conditions):
            raise ConfigError(f"rule.{key} does not apply to a rule on {on}")
    for key in FILTERS:
        value = rule.get(key)
        if value is not None and (not isinstance(value, str) or not value
                                  or len(value) > MAX_FILTER):
            raise ConfigError(f"rule.{key} must be 1 to {MAX_FILTER} characters")
    for key in conditions:
        if key not in rule:
            raise ConfigError(f"rule.{key} is required for a rule on {on}")
        _check_condition(key, rule[key])


def _check_condition(key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ConfigError(f"rule.{key} must be a number")
    if key in ("count", "min_sessions") and (not isinstance(value, int) or value < 1):
        raise ConfigError(f"rule.{key} must be an integer >= 1")
    if key == "minutes" and (not isinstance(value, int) or not 1 <= value <= MAX_MINUTES):
        raise ConfigError(f"rule.minutes must be an integer from 1 to {MAX_MINUTES}")
    if key == "threshold" and not 0 < value < 1:
        raise ConfigError("rule.threshold must be a fraction between 0 and 1 (0.05 is 5%)")
    if key == "p95_ms" and not 0 < value < 1e9:
        raise ConfigError("rule.p95_ms must be a number of milliseconds > 0")
