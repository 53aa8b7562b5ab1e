"""Alerts: facts about what broke, routed by rules to webhooks, Slack and email."""
