"""The roles of team accounts, least first: a viewer reads, a member also changes
error groups, an admin also keys, alerts, users and settings (docs/dashboard.md)."""

ROLES = ("viewer", "member", "admin")
