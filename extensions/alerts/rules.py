"""Rules: which facts go to which destinations.

A rule names the kind of fact it is `on`, the destinations it sends to, and
optionally the project, environment and service it is limited to. Rules on
`frequency`, `error_rate` and `latency` also carry their condition (count and
minutes, threshold and minutes, p95_ms and minutes): the evaluators
(evaluate.py) record a fact per rule whose condition holds, with the rule's key in
the fact's dedupe key, and such a fact goes only to the rules with that key.

A rule's key is a hash of its condition, not of its destinations: a destination
added to a rule keeps its windows and firing state, and two rules with one
condition share one fact (each destination still gets it once).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

from model.errors import ConfigError
from runtime.configcheck import nearest

# Release health (docs/release-health.md#alerts): a release's crash-free sessions or
# users below `threshold` over `minutes`, judged with at least `min_sessions`.
CRASH_FREE = ("crash_free_sessions", "crash_free_users")
KINDS = ("new_group", "regression", "deploy_worse", "frequency", "error_rate", "latency",
         *CRASH_FREE, "cron_missed", "cron_failed", "cron_recovered", "spike_protection")
# Kinds evaluated per rule: the fact names its rule by key.
EVALUATED = ("frequency", "error_rate", "latency", *CRASH_FREE)
# Kinds whose subject is a group's fingerprint: an ignored group sends none of them.
GROUP_KINDS = ("new_group", "regression", "frequency")
# The condition keys each kind takes (besides on, destinations, project, env, service).
CONDITIONS: dict[str, tuple[str, ...]] = {
    "frequency": ("count", "minutes"),
    "error_rate": ("threshold", "minutes"),
    "latency": ("p95_ms", "minutes"),
    **{kind: ("threshold", "minutes", "min_sessions") for kind in CRASH_FREE},
}
FILTERS = ("project", "env", "service")
# Sessions have no service: a crash-free rule takes the other filters.
NO_SERVICE = CRASH_FREE
MAX_MINUTES = 24 * 60


@dataclass(frozen=True, slots=True)
class Rule:
    on: str
    destinations: tuple[str, ...]
    project: str | None = None
    env: str | None = None
    service: str | None = None
    count: int | None = None  # frequency: more than `count` events...
    minutes: int | None = None  # ...in this many minutes (every evaluated kind)
    threshold: float | None = None  # error_rate: a fraction, 0 to 1
    p95_ms: float | None = None  # latency
    min_sessions: int | None = None  # crash_free_*: judged with at least this many

    @property
    def rule_key(self) -> str:
        """16 hex of the SHA-256 of the condition's canonical JSON (min_sessions only
        when set, so that the keys of the rules before it stay what they were)."""
        condition: dict[str, Any] = {
            "on": self.on, "project": self.project, "env": self.env,
            "service": self.service, "count": self.count, "minutes": self.minutes,
            "threshold": self.threshold, "p95_ms": self.p95_ms}
        if self.min_sessions is not None:
            condition["min_sessions"] = self.min_sessions
        canonical = json.dumps(condition, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _yaml_on(rule: dict[Any, Any]) -> dict[Any, Any]:
    """YAML 1.1 (PyYAML) reads a bare `on` key as the boolean true: `{on: new_group}`
    arrives as {True: "new_group"}. Put it back under "on", in place, so the rule
    reads as written."""
    if True in rule and "on" not in rule:
        rule["on"] = rule.pop(True)
    return rule


def parse(config: dict[str, Any]) -> Rule:
    """A rule from its checked configuration mapping."""
    config = _yaml_on(config)
    numbers = {key: config.get(key)
               for key in ("count", "minutes", "threshold", "p95_ms", "min_sessions")}
    return Rule(
        on=str(config["on"]), destinations=tuple(config["destinations"]),
        project=config.get("project"), env=config.get("env"), service=config.get("service"),
        count=int(numbers["count"]) if numbers["count"] is not None else None,
        minutes=int(numbers["minutes"]) if numbers["minutes"] is not None else None,
        threshold=float(numbers["threshold"]) if numbers["threshold"] is not None else None,
        p95_ms=float(numbers["p95_ms"]) if numbers["p95_ms"] is not None else None,
        min_sessions=(int(numbers["min_sessions"]) if numbers["min_sessions"] is not None
                      else None))


def check_rules(path: str, rules: Any, destinations: set[str]) -> None:
    if rules is None:
        return
    if not isinstance(rules, list):
        raise ConfigError(f"{path} must be a list of rules")
    for index, item in enumerate(rules):
        _check_rule(f"{path}[{index}]", item, destinations)


def _check_rule(path: str, rule: Any, destinations: set[str]) -> None:
    if not isinstance(rule, dict):
        raise ConfigError(f"{path} must be a mapping with on and destinations")
    on = _yaml_on(rule).get("on")
    if on not in KINDS:
        raise ConfigError(f"{path}.on must be one of {', '.join(KINDS)}, got {on!r}"
                          f"{nearest(str(on), KINDS)}")
    conditions = CONDITIONS.get(str(on), ())
    filters = tuple(f for f in FILTERS if not (on in NO_SERVICE and f == "service"))
    known = ("on", "destinations", *filters, *conditions)
    for key in rule:
        if key not in known:
            raise ConfigError(f"unknown key {path}.{key} for a rule on {on}"
                              f"{nearest(str(key), known)}")
    names = rule.get("destinations")
    if (not isinstance(names, list) or not names
            or not all(isinstance(name, str) for name in names)):
        raise ConfigError(f"{path}.destinations must be a non-empty list of destination names")
    for name in names:
        if name not in destinations:
            raise ConfigError(f"{path}.destinations: no destination is named {name!r}"
                              f"{nearest(name, destinations)}")
    for key in FILTERS:
        value = rule.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"{path}.{key} must be a non-empty string")
    for key in conditions:
        if key not in rule:
            raise ConfigError(f"{path}.{key} is required for a rule on {on}")
        _check_condition(f"{path}.{key}", key, rule[key])


def _check_condition(path: str, key: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{path} must be a number, got {value!r}")
    if key in ("count", "min_sessions") and (not isinstance(value, int) or value < 1):
        raise ConfigError(f"{path} must be an integer >= 1, got {value!r}")
    if key == "minutes" and (not isinstance(value, int) or not 1 <= value <= MAX_MINUTES):
        raise ConfigError(f"{path} must be an integer from 1 to {MAX_MINUTES}, got {value!r}")
    if key == "threshold" and not 0 < value < 1:
        raise ConfigError(f"{path} must be a fraction between 0 and 1 (0.05 is 5%), "
                          f"got {value!r}")
    if key == "p95_ms" and value <= 0:
        raise ConfigError(f"{path} must be a number of milliseconds > 0, got {value!r}")


def rule_key_of(dedupe_key: str) -> str | None:
    """The rule key inside an evaluated fact's dedupe key ("frequency:<rule key>:...")."""
    parts = dedupe_key.split(":", 2)
    return parts[1] if len(parts) >= 2 and parts[0] in EVALUATED else None


class FactLike(Protocol):
    """What matching reads of a fact (storage.alerts.outbox.Fact has it)."""

    @property
    def kind(self) -> str: ...
    @property
    def dedupe_key(self) -> str: ...
    @property
    def details(self) -> dict[str, Any]: ...


def matches(rule: Rule, fact: FactLike, project_name: str | None,
            group_status: str | None) -> bool:
    """Whether `rule` sends this fact. An ignored group never alerts. An evaluated
    fact was recorded for one rule key, its filters already applied."""
    kind, details = fact.kind, fact.details or {}
    if rule.on != kind or group_status == "ignored":
        return False
    if rule.project is not None and rule.project != project_name:
        return False
    if kind in EVALUATED:
        return rule_key_of(fact.dedupe_key) == rule.rule_key
    # A deploy's environment is its own; an error's is the first stored one's.
    env = details.get("environment", details.get("env"))
    if rule.env is not None and rule.env != env:
        return False
    return rule.service is None or rule.service == details.get("service")
