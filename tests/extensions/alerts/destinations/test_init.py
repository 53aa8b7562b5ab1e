"""Destination configs: each bad one refused naming the key, never echoing a URL or a
secret; a good one builds the destination of its type; shown back redacted."""

from __future__ import annotations

from typing import Any

import pytest

from extensions.alerts.destinations import build, check, redacted
from extensions.alerts.destinations.email import EmailDestination
from extensions.alerts.destinations.slack import SlackDestination
from extensions.alerts.destinations.webhook import WebhookDestination
from model.errors import ConfigError

P = "alerts.destinations[0]"
HOOK = {"name": "ops-hook", "type": "webhook", "url": "https://hooks.example.com/s/TOKEN",
        "secret": "0123456789abcdef"}
SLACK = {"name": "team", "type": "slack", "url": "https://hooks.slack.com/services/T/B/X"}
MAIL = {"name": "mail", "type": "email", "host": "smtp.example.com", "port": 587,
        "security": "starttls", "user": "u", "password": "p", "from": "a@example.com",
        "to": ["ops@example.com"]}


def _refused(config: Any, message: str) -> str:
    with pytest.raises(ConfigError) as caught:
        check(P, config)
    assert str(caught.value) == message
    return str(caught.value)


def test_good_configs_build_their_destination() -> None:
    for config, cls in ((HOOK, WebhookDestination), (SLACK, SlackDestination),
                        (MAIL, EmailDestination)):
        check(P, config)
        destination = build(config)
        assert isinstance(destination, cls)
        assert destination.name == config["name"]
        assert config["name"] in repr(destination)


def test_repr_shows_no_url_secret_or_password() -> None:
    text = repr(build(HOOK)) + repr(build(SLACK)) + repr(build(MAIL))
    assert "TOKEN" not in text and "0123456789abcdef" not in text and "services" not in text


def test_bad_configs_are_refused_naming_the_key() -> None:
    _refused("webhook", f"{P} must be a mapping")
    _refused({**HOOK, "name": ""}, f"{P}.name must be a non-empty string")
    _refused({**HOOK, "type": "pager"}, f"{P}.type must be one of webhook, slack, email")
    _refused({**HOOK, "secrte": "x"}, f"unknown key {P}.secrte (did you mean secret?)")
    _refused({**SLACK, "secret": "0123456789abcdef"}, f"unknown key {P}.secret")
    _refused({**HOOK, "secret": "short"},
             f"{P}.secret must be a string of at least 16 characters")
    _refused({**HOOK, "timeout_s": 0}, f"{P}.timeout_s must be a number of seconds > 0")
    _refused({**MAIL, "security": "ssl"}, f"{P}.security must be one of starttls, tls, none")
    _refused({**MAIL, "port": 70000}, f"{P}.port must be a port number (1-65535)")
    _refused({**MAIL, "to": []}, f"{P}.to must be a non-empty list of email addresses")
    _refused({**MAIL, "to": ["ops@example.com", "nobody"]},
             f"{P}.to[1] must be an email address")
    _refused({**MAIL, "from": "alerts"}, f"{P}.from must be an email address")
    _refused({**MAIL, "user": None}, f"{P}.user must be set when password is")
    _refused({k: v for k, v in MAIL.items() if k != "password"},
             f"{P}.password must be a string when user is set")
    _refused({k: v for k, v in MAIL.items() if k != "host"},
             f"{P}.host must be a non-empty string")


def test_a_bad_url_is_refused_without_echoing_it() -> None:
    for url in ("ftp://hooks.example.com/TOKEN", "hooks.example.com/TOKEN", "https:///TOKEN",
                "file:///etc/TOKEN", 42):
        message = _refused({**SLACK, "url": url}, f"{P}.url must be an http or https URL")
        assert "TOKEN" not in message


def test_redacted_shows_no_credential() -> None:
    assert redacted(HOOK) == {"name": "ops-hook", "type": "webhook",
                              "url": "https://hooks.example.com/…", "secret": "set"}
    assert redacted(MAIL)["password"] == "set" and redacted(MAIL)["user"] == "u"
