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
