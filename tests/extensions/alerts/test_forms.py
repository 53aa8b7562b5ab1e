"""forms.py: the dashboard's fields read into a destination's config and a rule, and
the rule check naming the field."""

from __future__ import annotations

import pytest

from extensions.alerts import forms
from model.errors import ConfigError


def test_a_destination_takes_only_the_fields_of_its_type() -> None:
    assert forms.destination_config({
        "name": " hook ", "type": "webhook", "url": " https://h.example/x ",
        "secret": " with spaces kept ", "host": "ignored", "password": "ignored"}) == {
        "name": "hook", "type": "webhook", "url": "https://h.example/x",
        "secret": " with spaces kept "}
    assert forms.destination_config({
        "name": "mail", "type": "email", "host": "smtp.example", "port": "2525",
        "security": "tls", "from": "a@example.com", "to": "b@example.com, c@example.com\nd@x.io",
        "user": "", "url": "ignored"}) == {
        "name": "mail", "type": "email", "host": "smtp.example", "port": 2525,
        "security": "tls", "from": "a@example.com",
        "to": ["b@example.com", "c@example.com", "d@x.io"]}


@pytest.mark.parametrize("form, message", [
    ({"name": "", "type": "slack"}, "destination.name must be"),
    ({"name": "a/b", "type": "slack"}, "destination.name must be"),
    ({"name": "-x", "type": "slack"}, "destination.name must be"),
    ({"name": "x" * 101, "type": "slack"}, "destination.name must be"),
    ({"name": "x", "type": "pager"}, "destination.type must be one of"),
    ({"name": "x", "type": "email", "port": "25x"}, "destination.port must be a port"),
])
def test_a_bad_destination_field_is_named(form: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        forms.destination_config(form)


def test_a_rule_takes_the_condition_of_its_kind_only() -> None:
    form = {"on": "error_rate", "threshold": "0.05", "minutes": "10", "count": "3",
            "env": " production ", "service": ""}
    assert forms.rule_config(form, ["ops"]) == {
        "on": "error_rate", "destinations": ["ops"], "env": "production", "threshold": 0.05,
        "minutes": 10}
    assert forms.rule_config({"on": "new_group", "minutes": "5"}, ["ops"]) == {
        "on": "new_group", "destinations": ["ops"]}


@pytest.mark.parametrize("rule, message", [
    ({"on": "nope", "destinations": ["ops"]}, "rule.on must be one of"),
    ({"on": "new_group", "destinations": []}, "rule.destinations must name"),
    ({"on": "new_group", "destinations": ["other"]}, "no destination is named 'other'"),
    ({"on": "new_group", "destinations": ["ops"], "count": 3}, "rule.count does not apply"),
    ({"on": "new_group", "destinations": ["ops"], "env": "x" * 201}, "rule.env must be"),
    ({"on": "frequency", "destinations": ["ops"], "minutes": 5}, "rule.count is required"),
    ({"on": "frequency", "destinations": ["ops"], "count": 0, "minutes": 5},
     "rule.count must be an integer >= 1"),
    ({"on": "frequency", "destinations": ["ops"], "count": 2, "minutes": 1441},
     "rule.minutes must be an integer from 1 to 1440"),
    ({"on": "error_rate", "destinations": ["ops"], "threshold": 1.0, "minutes": 5},
     "rule.threshold must be a fraction"),
    ({"on": "latency", "destinations": ["ops"], "p95_ms": float("nan"), "minutes": 5},
     "rule.p95_ms must be a number"),
    ({"on": "latency", "destinations": ["ops"], "p95_ms": -1.0, "minutes": 5},
     "rule.p95_ms must be a number of milliseconds > 0"),
])
def test_a_bad_rule_is_refused_naming_the_field(rule: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        forms.check_rule(rule, {"ops"})


def test_a_good_rule_passes() -> None:
    forms.check_rule({"on": "latency", "destinations": ["ops"], "p95_ms": 500.0, "minutes": 5,
                      "service": "checkout"}, {"ops"})


def test_a_number_that_is_not_one_is_named() -> None:
    with pytest.raises(ConfigError, match="rule.threshold must be a number"):
        forms.rule_config({"on": "error_rate", "threshold": "5%"}, ["ops"])


def test_a_crash_free_rule_from_the_form() -> None:
    form = {"on": "crash_free_users", "threshold": "0.98", "minutes": "60",
            "min_sessions": "50", "env": "prod", "p95_ms": "3"}
    rule = forms.rule_config(form, ["ops"])
    assert rule == {"on": "crash_free_users", "destinations": ["ops"], "env": "prod",
                    "threshold": 0.98, "minutes": 60, "min_sessions": 50}
    forms.check_rule(rule, {"ops"})
    for bad, message in [({**rule, "service": "api"}, "rule.service does not apply"),
                         ({**rule, "min_sessions": 0}, "rule.min_sessions must be an integer"),
                         ({k: v for k, v in rule.items() if k != "min_sessions"},
                          "rule.min_sessions is required")]:
        with pytest.raises(ConfigError, match=message):
            forms.check_rule(bad, {"ops"})
    with pytest.raises(ConfigError, match="rule.min_sessions must be an integer"):
        forms.rule_config({**form, "min_sessions": "5.5"}, ["ops"])
