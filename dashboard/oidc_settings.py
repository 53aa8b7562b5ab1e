"""The `dashboard.oidc` settings: each OpenID provider's keys, their defaults and
checks, and the rule that maps a provider's claim to Sounding roles.

A `role_map` value is a role across all projects (`sre: admin`), a role in one
project (`acme-devs: {project: acme, role: member}`), or a list of these (one group
giving roles in several projects). An account's global role is the highest any of
its values maps to across all projects (`none` when they name only projects), its
role in a project the highest they map to there (docs/dashboard.md).

Imported by dashboard/extension.py to check the configuration, so it imports nothing
of the dashboard (see that module's docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from model.errors import ConfigError
from runtime.configcheck import check_keys
from storage.accounts.roles import PROJECT_ROLES, highest

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
    "role_map": {},  # required: claim value -> role, {project, role}, or a list of them
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
    # claim value -> (project name, or None for all projects, role) pairs
    role_map: dict[str, tuple[tuple[str | None, str], ...]]

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

    def role_of(self, claims: dict[str, Any]) -> Mapped | None:
        """The roles the claim's values map to; None when none maps to any."""
        pairs = [pair for v in self.claim_values(claims) for pair in self.role_map.get(v, ())]
        if not pairs:
            return None
        projects: dict[str, str] = {}
        for project, role in pairs:
            if project is not None:
                projects[project] = highest([projects.get(project, "none"), role])
        return Mapped(highest([r for p, r in pairs if p is None]), projects)


@dataclass(frozen=True)
class Mapped:
    """What a login's claim maps to: a global role (`none`: only `projects`) and roles
    by project name."""
    role: str
    projects: dict[str, str]


def map_entries(value: Any) -> tuple[tuple[str | None, str], ...]:
    """A `role_map` value (already checked) as (project or None, role) pairs."""
    items = value if isinstance(value, list) else [value]
    return tuple((None, item) if isinstance(item, str) else (item["project"], item["role"])
                 for item in items)


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
            role_map={str(k): map_entries(v) for k, v in entry["role_map"].items()}))
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
    for value, mapped in role_map.items():
        _check_mapped(f"{where}.role_map[{value!r}]", mapped)


def _check_mapped(where: str, mapped: Any) -> None:
    roles = ", ".join(PROJECT_ROLES)
    items = mapped if isinstance(mapped, list) and mapped else [mapped]
    for item in items:
        if isinstance(item, str):
            if item not in PROJECT_ROLES:
                raise ConfigError(f"{where} must be one of {roles} (across all projects), "
                                  f"{{project: NAME, role: ROLE}} or a list of these, "
                                  f"not {item!r}")
            continue
        if not isinstance(item, dict) or set(item) != {"project", "role"}:
            raise ConfigError(f"{where} must be a role ({roles}), {{project: NAME, role: "
                              f"ROLE}} or a list of these, not {item!r}")
        if not isinstance(item["project"], str) or not item["project"]:
            raise ConfigError(f"{where}.project must be a project's name")
        if item["role"] not in PROJECT_ROLES:
            raise ConfigError(f"{where}.role must be one of {roles}, not {item['role']!r}")
