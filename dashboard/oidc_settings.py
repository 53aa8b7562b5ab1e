"""The `dashboard.oidc` settings: each OpenID provider's keys, their defaults and
checks, and the rule that maps a provider's claim to a Sounding role.

Imported by dashboard/extension.py to check the configuration, so it imports nothing
of the dashboard (see that module's docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from model.errors import ConfigError
from runtime.configcheck import check_keys
from storage.accounts.roles import ROLES

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
ISSUER = re.compile(r"https?://[^\s?#]+")

PROVIDER_DEFAULTS: dict[str, Any] = {
    "name": None,  # required: in URLs (/login/oidc/<name>) and in user_identities
    "label": None,  # the button's text; None: "Log in with <name>"
    "issuer": None,  # required: discovery is read from <issuer>/.well-known/...
    "client_id": None,  # required
    "client_secret": None,  # required
    "scopes": ["openid", "email", "profile"],
    "email_claim": "email",
    "role_claim": "groups",
    "role_map": {},  # required: claim value -> viewer | member | admin
}
REQUIRED = ("name", "issuer", "client_id", "client_secret", "role_map")


@dataclass(frozen=True)
class ProviderSettings:
    name: str
    label: str
    issuer: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]
    email_claim: str
    role_claim: str
    role_map: dict[str, str]

    def claim_values(self, claims: dict[str, Any]) -> list[str]:
        """The role claim's values: a string or a list of strings, found by its whole
        name, or else as a dotted path (Keycloak's `realm_access.roles`)."""
        value: Any = claims.get(self.role_claim)
        if value is None and "." in self.role_claim:
            value = claims
            for part in self.role_claim.split("."):
                value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [item for item in value if isinstance(item, str)]
        return []

    def role_of(self, claims: dict[str, Any]) -> str | None:
        """The highest role any value maps to; None when none does."""
        roles = {self.role_map[v] for v in self.claim_values(claims) if v in self.role_map}
        return max(roles, key=ROLES.index) if roles else None


def providers(settings: dict[str, Any]) -> list[ProviderSettings]:
    """The configured providers, defaults filled in (already checked at start)."""
    found = []
    for raw in (settings.get("oidc") or {}).get("providers") or []:
        entry = {**PROVIDER_DEFAULTS, **raw}
        found.append(ProviderSettings(
            name=entry["name"], label=entry["label"] or f"Log in with {entry['name']}",
            issuer=entry["issuer"], client_id=str(entry["client_id"]),
            client_secret=str(entry["client_secret"]), scopes=tuple(entry["scopes"]),
            email_claim=entry["email_claim"], role_claim=entry["role_claim"],
            role_map=dict(entry["role_map"])))
    return found


def check(path: str, oidc: Any) -> None:
    """Refuse a bad `dashboard.oidc` section, naming the key."""
    if oidc is None:
        return
    if not isinstance(oidc, dict):
        raise ConfigError(f"{path} must be a mapping")
    check_keys(path, oidc, {"providers": []})
    entries = oidc.get("providers") or []
    if not isinstance(entries, list):
        raise ConfigError(f"{path}.providers must be a list of providers")
    names: set[str] = set()
    for index, entry in enumerate(entries):
        where = f"{path}.providers[{index}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a mapping")
        check_keys(where, entry, PROVIDER_DEFAULTS)
        _check_provider(where, {**PROVIDER_DEFAULTS, **entry}, names)


def _check_provider(where: str, entry: dict[str, Any], names: set[str]) -> None:
    name = entry["name"]
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ConfigError(f"{where}.name must be 1-64 of a-z, 0-9, '-' and '_', starting with "
                          "a letter or digit (it is part of the redirect URI)")
    if name in names:
        raise ConfigError(f"{where}.name {name!r} is used by another provider")
    names.add(name)
    issuer = entry["issuer"]
    if not isinstance(issuer, str) or not ISSUER.fullmatch(issuer):
        raise ConfigError(f"{where}.issuer must be the provider's issuer URL, "
                          "https://host[/path], exactly as its discovery document names it")
    for key in ("client_id", "client_secret"):
        value = entry[key]
        if isinstance(value, int) and not isinstance(value, bool):
            continue  # YAML reads an all-digit id or secret as a number
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where}.{key} is required (a string)")
    for key in ("label", "email_claim", "role_claim"):
        if entry[key] is not None and (not isinstance(entry[key], str) or not entry[key]):
            raise ConfigError(f"{where}.{key} must be a non-empty string")
    scopes = entry["scopes"]
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes) \
            or "openid" not in scopes:
        raise ConfigError(f"{where}.scopes must be a list of strings holding 'openid'")
    role_map = entry["role_map"]
    if not isinstance(role_map, dict) or not role_map:
        raise ConfigError(f"{where}.role_map is required: which values of the "
                          f"{entry['role_claim']!r} claim give which role")
    for value, role in role_map.items():
        if role not in ROLES:
            raise ConfigError(f"{where}.role_map[{value!r}] must be one of "
                              f"{', '.join(ROLES)}, not {role!r}")
