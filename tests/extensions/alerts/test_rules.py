"""Rules: which fact each rule sends, and the key evaluated facts carry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from extensions.alerts.rules import Rule, matches, parse, rule_key_of


@dataclass(frozen=True)
class Fact:
    kind: str
    dedupe_key: str
    details: dict[str, Any] = field(default_factory=dict)


NEW = Fact("new_group", "new_group:fp1", {"environment": "production", "service": "api"})


def test_a_rule_sends_its_kind_only() -> None:
    rule = Rule("new_group", ("hook",))
    assert matches(rule, NEW, "acme", "open")
    assert not matches(rule, Fact("regression", "regression:fp1:1"), "acme", "open")


def test_an_ignored_group_never_alerts() -> None:
    for kind, key in (("new_group", "new_group:fp"), ("regression", "regression:fp:2")):
        assert not matches(Rule(kind, ("hook",)), Fact(kind, key), "acme", "ignored")


def test_a_rule_limited_by_project_env_or_service_sends_only_those() -> None:
    assert matches(Rule("new_group", ("h",), project="acme"), NEW, "acme", "open")
    assert not matches(Rule("new_group", ("h",), project="other"), NEW, "acme", "open")
    assert matches(Rule("new_group", ("h",), env="production"), NEW, "acme", "open")
    assert not matches(Rule("new_group", ("h",), env="staging"), NEW, "acme", "open")
    assert matches(Rule("new_group", ("h",), service="api"), NEW, "acme", "open")
    assert not matches(Rule("new_group", ("h",), service="web"), NEW, "acme", "open")
    # A deploy's environment is its own `env`.
    deploy = Fact("deploy_worse", "deploy_worse:7", {"env": "production"})
    assert matches(Rule("deploy_worse", ("h",), env="production"), deploy, "acme", None)
    assert not matches(Rule("deploy_worse", ("h",), env="staging"), deploy, "acme", None)


def test_an_evaluated_fact_goes_to_the_rules_with_its_key_only() -> None:
    five = parse({"on": "frequency", "destinations": ["a"], "count": 100, "minutes": 5})
    ten = parse({"on": "frequency", "destinations": ["b"], "count": 100, "minutes": 10})
    fact = Fact("frequency", f"frequency:{five.rule_key}:fp1:1700000000")
    assert rule_key_of(fact.dedupe_key) == five.rule_key
    assert matches(five, fact, "acme", "open")
    assert not matches(ten, fact, "acme", "open")


def test_the_rule_key_is_its_condition_not_its_destinations() -> None:
    base = {"on": "error_rate", "threshold": 0.05, "minutes": 5, "service": "api"}
    one = parse({**base, "destinations": ["a"]})
    other = parse({**base, "destinations": ["a", "b"]})
    assert one.rule_key == other.rule_key
    assert len(one.rule_key) == 16 and int(one.rule_key, 16) >= 0
    assert parse({**base, "destinations": ["a"], "minutes": 6}).rule_key != one.rule_key
    assert parse({**base, "destinations": ["a"], "service": "web"}).rule_key != one.rule_key


def test_a_bare_yaml_on_key_reads_as_on() -> None:
    import yaml

    (config,) = yaml.safe_load("[{on: new_group, destinations: [hook]}]")
    assert True in config  # YAML 1.1: `on` is a boolean
    assert parse(config).on == "new_group"


def test_a_crash_free_rule_takes_its_condition_and_no_service() -> None:
    import re

    import pytest

    from extensions.alerts import rules as r
    from model.errors import ConfigError

    good = {"on": "crash_free_users", "destinations": ["hook"], "env": "prod",
            "threshold": 0.95, "minutes": 60, "min_sessions": 100}
    r.check_rules("alerts.rules", [good], {"hook"})
    rule = r.parse(good)
    assert (rule.threshold, rule.minutes, rule.min_sessions) == (0.95, 60, 100)
    # min_sessions is in the key only when set: the keys of older rules stay the same.
    assert r.parse({"on": "latency", "destinations": ["hook"], "p95_ms": 5, "minutes": 5}
                   ).rule_key == r.Rule("latency", ("hook",), p95_ms=5.0, minutes=5).rule_key
    assert rule.rule_key != r.parse({**good, "min_sessions": 10}).rule_key
    for bad, message in [({**good, "service": "api"}, "unknown key alerts.rules[0].service"),
                         ({**good, "min_sessions": 0}, "min_sessions must be an integer >= 1"),
                         ({k: v for k, v in good.items() if k != "min_sessions"},
                          "min_sessions is required"),
                         ({**good, "threshold": 95}, "fraction between 0 and 1")]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            r.check_rules("alerts.rules", [bad], {"hook"})
