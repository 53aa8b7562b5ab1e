"""The roles of team accounts, least first: a viewer reads, a member also changes
error groups, an admin also keys, alerts, users and settings (docs/dashboard.md).

An account has a global role and may have roles in single projects
(storage/accounts/project_roles.py); `role_in` is the one rule of what it is in a
project. The global role `none` gives no project at all: such an account sees only
the projects it has a role in."""

from __future__ import annotations

from collections.abc import Mapping

ROLES = ("none", "viewer", "member", "admin")
# What a role in one project may be (none there would be no role: the row is removed).
PROJECT_ROLES = ROLES[1:]


def at_least(role: str, needed: str) -> bool:
    return ROLES.index(role) >= ROLES.index(needed)


def highest(roles: Mapping[object, str] | list[str] | set[str]) -> str:
    """The highest of some roles (`none` for none)."""
    values = roles.values() if isinstance(roles, Mapping) else roles
    return max(values, key=ROLES.index, default="none")


def role_in(global_role: str, project_roles: Mapping[int, str], project_id: int) -> str:
    """An account's role in a project: the higher of its global role and its role in
    that project. Everything that acts in a project asks this (dashboard/access.py),
    for a session and for a personal token alike."""
    return highest([global_role, project_roles.get(project_id, "none")])
