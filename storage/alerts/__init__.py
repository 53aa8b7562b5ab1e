"""Alerts' tables: the outbox of facts and deliveries, settings made on the dashboard, rule
state and verdicts, and what routing reads."""
