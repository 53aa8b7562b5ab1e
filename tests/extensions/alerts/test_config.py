"""The alerts: section's checks: every bad setting stops the collector at start,
naming the key; the YAML file and the SOUNDING__ALERTS__* override both set it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from extensions.alerts.config import DEFAULTS, check
from model.errors import ConfigError
from sounding import config as config_mod

HOOK = {"name": "ops-hook", "type": "webhook", "url": "https://hooks.example.com/s",
        "secret": "0123456789abcdef"}


def _section(**over: Any) -> dict[str, Any]:
    section: dict[str, Any] = {**DEFAULTS, "retry": dict(DEFAULTS["retry"]),
                               "destinations": [HOOK],
                               "rules": [{"on": "new_group", "destinations": ["ops-hook"]}]}
    section.update(over)
    return section


def test_the_defaults_and_a_plain_section_pass() -> None:
    check("alerts", dict(DEFAULTS, retry=dict(DEFAULTS["retry"])))
    check("alerts", _section())


@pytest.mark.parametrize(("over", "named"), [
    ({"rate_per_minute": 0}, "alerts.rate_per_minute"),
    ({"poll_s": "fast"}, "alerts.poll_s"),
    ({"retry": {"first_s": 1, "max_s": 300, "give_up_s": 0}}, "alerts.retry.give_up_s"),
    ({"retry": {"first_s": 10, "max_s": 1, "give_up_s": 60}}, "alerts.retry.max_s"),
    ({"public_url": "ftp://x"}, "alerts.public_url"),
    ({"public_url": "https://user@x.example"}, "alerts.public_url"),
    ({"rate_per_minut": 5}, "alerts.rate_per_minut (did you mean rate_per_minute?)"),
    ({"destinations": {"ops": HOOK}}, "alerts.destinations must be a list"),
    ({"destinations": [HOOK, HOOK]}, "alerts.destinations[1].name"),
    ({"destinations": [{**HOOK, "type": "webhok"}]},
     "alerts.destinations[0].type must be one of webhook, slack, email, got 'webhok' "
     "(did you mean webhook?)"),
    ({"destinations": [{**HOOK, "name": "a b"}]}, "alerts.destinations[0].name"),
    ({"rules": [{"on": "new_groups", "destinations": ["ops-hook"]}]},
     "alerts.rules[0].on must be one of"),
    ({"rules": [{"on": "new_group", "destinations": ["ops-hok"]}]},
     "alerts.rules[0].destinations: no destination is named 'ops-hok' (did you mean "
     "ops-hook?)"),
    ({"rules": [{"on": "new_group", "destinations": []}]}, "alerts.rules[0].destinations"),
    ({"rules": [{"on": "new_group", "destinations": ["ops-hook"], "environment": "prod"}]},
     "unknown key alerts.rules[0].environment"),
    ({"rules": [{"on": "new_group", "destinations": ["ops-hook"], "count": 3}]},
     "unknown key alerts.rules[0].count"),
    ({"rules": [{"on": "frequency", "destinations": ["ops-hook"], "count": 3}]},
     "alerts.rules[0].minutes is required"),
    ({"rules": [{"on": "frequency", "destinations": ["ops-hook"], "count": 0,
                 "minutes": 5}]}, "alerts.rules[0].count must be an integer >= 1"),
    ({"rules": [{"on": "error_rate", "destinations": ["ops-hook"], "threshold": 5,
                 "minutes": 5}]}, "alerts.rules[0].threshold must be a fraction"),
    ({"rules": [{"on": "latency", "destinations": ["ops-hook"], "p95_ms": -1,
                 "minutes": 5}]}, "alerts.rules[0].p95_ms"),
    ({"rules": [{"on": "new_group", "destinations": ["ops-hook"], "env": ""}]},
     "alerts.rules[0].env must be a non-empty string"),
])
def test_a_bad_setting_is_refused_naming_its_key(over: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check("alerts", _section(**over))
    assert named in str(caught.value)


def test_the_whole_section_is_read_from_yaml_and_from_the_environment(tmp_path: Path
                                                                       ) -> None:
    env = {"SOUNDING_DATABASE_URL": f"sqlite:///{tmp_path / 'db'}",
           "SOUNDING__ALERTS__DESTINATIONS": "[{name: ops-hook, type: webhook, "
           "url: 'https://hooks.example.com/s', secret: 0123456789abcdef}]",
           "SOUNDING__ALERTS__RULES": "[{on: new_group, destinations: [ops-hook], "
           "env: production}]",
           "SOUNDING__ALERTS__RATE_PER_MINUTE": "5",
           "SOUNDING__ALERTS__PUBLIC_URL": "https://sounding.example.com"}
    loaded = config_mod.load(environ=env)["alerts"]
    assert loaded["destinations"][0]["name"] == "ops-hook"
    assert loaded["rules"] == [{"on": "new_group", "destinations": ["ops-hook"],
                                "env": "production"}]
    assert loaded["rate_per_minute"] == 5
    assert loaded["public_url"] == "https://sounding.example.com"
    assert loaded["retry"] == DEFAULTS["retry"]  # defaults kept beside what was given

    path = tmp_path / "sounding.yaml"
    path.write_text("alerts:\n  destinations:\n    - {name: team, type: slack, "
                    "url: 'https://hooks.slack.example/services/x'}\n  rules:\n"
                    "    - {on: regression, destinations: [team]}\n  retry: {first_s: 2}\n")
    loaded = config_mod.load(path, environ={"SOUNDING_DATABASE_URL": env[
        "SOUNDING_DATABASE_URL"]})["alerts"]
    assert loaded["rules"][0]["on"] == "regression"
    assert loaded["retry"] == {**DEFAULTS["retry"], "first_s": 2}


def test_a_rule_naming_a_missing_destination_stops_the_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"alerts.rules\[0\].destinations"):
        config_mod.load(environ={"SOUNDING_DATABASE_URL": f"sqlite:///{tmp_path / 'db'}",
                                 "SOUNDING__ALERTS__RULES":
                                 "[{on: new_group, destinations: [nowhere]}]"})
