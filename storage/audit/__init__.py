"""The audit log: who changed what, when, with the before and after (docs/audit.md)."""
