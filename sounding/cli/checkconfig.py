"""`sounding check-config`: validate the configuration (file, then environment) and
print the effective one as YAML, every secret masked, to paste in an issue."""

from __future__ import annotations

import argparse
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import yaml

MASK = "***"
# Keys whose value is a credential wherever they appear (api_keys, admin_token,
# cookie_secret, secrets_key, a destination's secret or password, a plugin's
# `token` or `client_secret`...). A key naming a file (tls.key_file) is a path,
# shown as it is.
SECRET_KEY = re.compile(r"(key|token|secret|passw(or)?d|credential|cookie|auth)",
                        re.IGNORECASE)
NOT_SECRET = re.compile(r"(_file|_path|_seconds|_s|_days)$", re.IGNORECASE)
# Values of these mappings are credentials as a whole: HTTP headers (Authorization,
# X-Api-Key...) sent by the forward exporter.
SECRET_MAPPINGS = frozenset({"headers"})
# A URL whose path or query is its secret (a Slack incoming webhook): only its
# scheme and host are shown.
SECRET_URL_PARENTS = frozenset({"destinations"})


def masked(value: Any, key: str = "", parent: str = "") -> Any:
    """`value` with every secret replaced by MASK (None and "" left as they are, so
    that an unset secret reads as unset)."""
    if isinstance(value, dict):
        return {k: (_masked_mapping(v) if str(k) in SECRET_MAPPINGS
                    else masked(v, str(k), key)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(item, key, key) for item in value]
    if value in (None, "") or isinstance(value, bool):
        return value
    if key == "api_keys" and isinstance(value, str):
        # project:key pairs: the projects are not secret, and they help.
        return ",".join(f"{pair.partition(':')[0].strip()}:{MASK}"
                        for pair in value.split(",") if pair.strip())
    if SECRET_KEY.search(key) and not NOT_SECRET.search(key):
        return MASK  # a number too: YAML reads an all-digit secret as one
    if isinstance(value, str) and "://" in value:
        return _masked_url(value, whole=key == "url" and parent in SECRET_URL_PARENTS)
    return value


def _masked_mapping(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: MASK if v not in (None, "") else v for k, v in value.items()}
    return masked(value)


def _masked_url(url: str, whole: bool = False) -> str:
    """The password of a URL masked (postgresql://user:***@host/db), a user without
    one too (a Sentry DSN's user is its key), or with `whole` everything past the
    host."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return MASK
    if whole:
        return f"{parts.scheme}://{parts.hostname}/{MASK}" if parts.hostname else MASK
    shown = url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if any(SECRET_KEY.search(name) for name, _ in pairs):
        # ?password=..., ?token=...: libpq and webhooks take them so.
        query = urlencode([(name, MASK if SECRET_KEY.search(name) else value)
                           for name, value in pairs], safe="*")
        shown = shown.replace(f"?{parts.query}", f"?{query}", 1)
    if "@" in parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        userinfo = MASK if password is None else f"{parts.username or ''}:{MASK}"
        # Replaced in the text, not rebuilt: urlunsplit drops sqlite:///'s empty host.
        shown = shown.replace(parts.netloc, f"{userinfo}@{host}", 1)
    return shown


def cmd_check_config(config: dict[str, Any], _args: argparse.Namespace) -> int:
    # Reaching here, the configuration loaded and validated (main exits 2 otherwise).
    print("# configuration is valid; effective settings (secrets masked):")
    print(yaml.safe_dump(masked(config), sort_keys=True, default_flow_style=False), end="")
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    sub.add_parser("check-config", parents=[common],
                   help="validate the configuration and print it, secrets masked"
                   ).set_defaults(func=cmd_check_config)
