"""Alerts: facts the store records (a new group, a regression, a deploy made worse,
a spike) routed by rules to destinations (webhook, Slack, email) through a durable
outbox. docs/alerts.md says what a user sees; docs/architecture.md where
each part lives."""
