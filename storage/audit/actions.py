"""The audit log's vocabulary: every action a record may name, with what it means.

One word per kind of change, `<what it changes>.<verb>`; the audit page offers them
as its filter, and a family (`group`) filters all of its words. A new audited change
adds its word here, then calls storage/audit/log.py's `record` in its transaction.
Words for what other parts of Sounding will record (API tokens, rate limits,
filters, scrubbing rules) are here already, so that each is one call there.
"""

from __future__ import annotations

ACTIONS: dict[str, str] = {
    # Error groups (storage/groups/status.py, storage/groups/merge.py).
    "group.resolve": "resolved an error group (after: next_release, resolved_release)",
    "group.ignore": "ignored an error group for good",
    "group.snooze": "ignored an error group until a snooze condition (after: snooze)",
    "group.reopen": "reopened an error group",
    "group.merge": "merged error groups into this one (after: groups)",
    "group.unmerge": "took an error group out of the one it was merged into",
    # Alerts (storage/alerts/settings.py).
    "alert_rule.create": "added an alert rule",
    "alert_rule.delete": "removed an alert rule",
    "destination.create": "added an alert destination (credentials never recorded)",
    "destination.delete": "removed an alert destination",
    # Accounts (storage/accounts/users.py, storage/accounts/identities.py).
    "user.create": "added an account (by an admin, or on its first single sign-on)",
    "user.role": "changed an account's role, across all projects or in some (by an admin, "
                 "or by the identity provider)",
    "user.password": "changed an account's password (never recorded)",
    "user.disable": "disabled an account (its sessions ended)",
    "user.enable": "enabled a disabled account",
    "user.delete": "deleted an account, its sessions and tokens",
    # API tokens (the tokens of issue 28).
    "token.create": "made an API token (never the token itself)",
    "token.revoke": "revoked an API token",
    # Projects, ingest keys and the admin token (storage/projects.py, storage/keys.py,
    # storage/accounts/secrets.py).
    "project.create": "made a project",
    "key.create": "made an ingest key (never the key itself)",
    "key.revoke": "revoked an ingest key",
    "key.rotate": "made a new ingest key and scheduled the older ones' revocation",
    "admin_token.rotate": "replaced the generated admin token (every session ended)",
    # Settings made on the dashboard.
    "config.rate_limit": "changed a project's rate limits",
    "config.detectors": "changed a project's performance detectors",
    "config.filter": "changed a project's inbound filters",
    "config.scrubbing": "changed a project's scrubbing rules",
}


def family(action: str) -> str:
    """The family of an action: `group` of `group.resolve`."""
    return action.partition(".")[0]


FAMILIES = tuple(dict.fromkeys(family(a) for a in ACTIONS))
