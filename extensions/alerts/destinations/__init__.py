"""Where alerts go: one module per destination type, each a class built from its
config dict with `async send(message) -> SendResult` (runtime/retry.py: Sent, Retry or
Failed). `check` validates a destination's config naming the bad key (and never
echoing a URL or a secret); `build` makes one.

An outcome's error is short fixed words plus a status code ("http 503", "timeout",
"smtp 550"): never a URL, a secret, a password or a server's free text, so that it
can be stored, shown in the dashboard and logged as it is.
"""

from __future__ import annotations

from email.utils import parseaddr
from typing import Any, Protocol
from urllib.parse import urlsplit

from extensions.alerts.destinations.email import SECURITY, EmailDestination
from extensions.alerts.destinations.slack import SlackDestination
from extensions.alerts.destinations.webhook import WebhookDestination
from extensions.alerts.message import Message
from model.errors import ConfigError
from runtime.configcheck import check_keys, join
from runtime.retry import SendResult

__all__ = ["Destination", "build", "check", "redacted"]

MIN_SECRET = 16
MAX_NAME = 100
_HTTP = {"name": None, "type": None, "url": None, "connect_timeout_s": None,
         "timeout_s": None, "ca_file": None}
KEYS: dict[str, dict[str, Any]] = {
    "webhook": {**_HTTP, "secret": None},
    "slack": _HTTP,
    "email": {"name": None, "type": None, "host": None, "port": None, "security": None,
              "user": None, "password": None, "from": None, "to": None, "timeout_s": None,
              "ca_file": None},
}
TYPES: dict[str, type[WebhookDestination | SlackDestination | EmailDestination]] = {
    "webhook": WebhookDestination, "slack": SlackDestination, "email": EmailDestination}
# Shown back (dashboard, logs) only as "set": these hold or are credentials.
SECRET_KEYS = frozenset({"url", "secret", "password"})


class Destination(Protocol):
    name: str
    type: str

    async def send(self, message: Message) -> SendResult: ...


def _text(path: str, config: dict[str, Any], key: str, required: bool = True) -> str | None:
    value = config.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{join(path, key)} must be a non-empty string")
    return value


def _positive(path: str, config: dict[str, Any], key: str) -> None:
    value = config.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                              or value <= 0):
        raise ConfigError(f"{join(path, key)} must be a number of seconds > 0")


def _address(path: str, value: Any) -> None:
    if not isinstance(value, str) or "@" not in parseaddr(value)[1]:
        raise ConfigError(f"{path} must be an email address")


def check(path: str, config: Any) -> None:
    """Refuse a destination config that cannot work, naming the key."""
    if not isinstance(config, dict):
        raise ConfigError(f"{path} must be a mapping")
    name = _text(path, config, "name")
    if name is not None and len(name) > MAX_NAME:
        raise ConfigError(f"{join(path, 'name')} must be at most {MAX_NAME} characters")
    kind = config.get("type")
    if kind not in TYPES:
        raise ConfigError(f"{join(path, 'type')} must be one of {', '.join(TYPES)}")
    check_keys(path, config, KEYS[kind])
    _positive(path, config, "timeout_s")
    _text(path, config, "ca_file", required=False)
    if kind in ("webhook", "slack"):
        _positive(path, config, "connect_timeout_s")
        url = config.get("url")
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            # The value is not echoed: a Slack URL is a credential.
            raise ConfigError(f"{join(path, 'url')} must be an http or https URL")
    if kind == "webhook":
        secret = config.get("secret")
        if not isinstance(secret, str) or len(secret) < MIN_SECRET:
            raise ConfigError(f"{join(path, 'secret')} must be a string of at least "
                              f"{MIN_SECRET} characters")
    if kind == "email":
        _check_email(path, config)


def _check_email(path: str, config: dict[str, Any]) -> None:
    _text(path, config, "host")
    security = config.get("security", "starttls")
    if security not in SECURITY:
        raise ConfigError(f"{join(path, 'security')} must be one of {', '.join(SECURITY)}")
    port = config.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)
                             or not 1 <= port <= 65535):
        raise ConfigError(f"{join(path, 'port')} must be a port number (1-65535)")
    if _text(path, config, "user", required=False) is not None:
        if not isinstance(config.get("password"), str):
            raise ConfigError(f"{join(path, 'password')} must be a string when user is set")
    elif config.get("password") is not None:
        raise ConfigError(f"{join(path, 'user')} must be set when password is")
    _address(join(path, "from"), config.get("from"))
    to = config.get("to")
    if not isinstance(to, list) or not to:
        raise ConfigError(f"{join(path, 'to')} must be a non-empty list of email addresses")
    for i, address in enumerate(to):
        _address(f"{join(path, 'to')}[{i}]", address)


def build(config: dict[str, Any]) -> Destination:
    """The destination for a config that `check` passed."""
    return TYPES[config["type"]](config)


def redacted(config: dict[str, Any]) -> dict[str, Any]:
    """A destination's config fit to show: credentials replaced, a URL cut to its
    scheme and host (a Slack URL's path is its secret)."""
    shown: dict[str, Any] = {}
    for key, value in config.items():
        if key == "url" and isinstance(value, str):
            parts = urlsplit(value)
            shown[key] = f"{parts.scheme}://{parts.hostname}/…" if parts.hostname else "…"
        elif key in SECRET_KEYS:
            shown[key] = "set" if value else None
        else:
            shown[key] = value
    return shown
