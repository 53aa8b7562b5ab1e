"""Alerts: the destinations and rules set on the dashboard, the facts that happened,
the deliveries to make, and the state of threshold rules."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from storage import rows
from storage.schema.columns import metadata

# Alert destinations and rules made on a project's dashboard page (migration 0011,
# storage/alerts/settings.py); those of the configuration file are not stored. A
# destination's `config` holds no credential: its URL (a Slack URL is one), webhook
# secret and SMTP password are in `sealed`, AES-GCM under `alerts.secrets_key`
# (extensions/alerts/secretbox.py).
alert_destinations = Table(
    "alert_destinations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("type", String(16), nullable=False),
    Column("config", JSON, nullable=False),
    Column("sealed", LargeBinary, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    UniqueConstraint("project_id", "name", name="uq_alert_destinations_project_name"),
)

alert_rules = Table(
    "alert_rules",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("rule", JSON, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Index("ix_alert_rules_project", "project_id"),
)

# Alerts (migration 0010, storage/alerts/outbox.py): a durable outbox of what happened and
# of what is to be sent where. A fact is written in the transaction of the change
# that causes it (the writer's new groups and reopenings: storage/writer/alert_facts.py;
# the evaluators' verdicts), once per (project, dedupe key) across every collector.
# `routed_us` stays NULL until the router has made the fact's deliveries: the partial
# index keeps finding those few cheap however many facts are kept.
ALERT_KINDS = ("new_group", "regression", "deploy_worse", "frequency", "error_rate",
               "latency", "crash_free_sessions", "crash_free_users", "test", "cron_missed",
               "cron_failed", "cron_recovered", "spike_protection")
alert_facts = Table(
    rows.ALERT_FACTS,
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True,
           autoincrement=True),
    Column("project_id", Integer, nullable=False),
    Column("kind", String(32), nullable=False),  # one of ALERT_KINDS
    Column("subject", Text, nullable=False),  # the fingerprint, deploy id or service
    Column("dedupe_key", String(rows.DEDUPE_KEY_LENGTH), nullable=False),
    Column("at_us", BigInteger, nullable=False),  # when it happened
    Column("details", JSON, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("routed_us", BigInteger, nullable=True),
    UniqueConstraint("project_id", "dedupe_key", name="uq_alert_facts_project_dedupe_key"),
    Index("ix_alert_facts_project_id", "project_id", "id"),
    Index("ix_alert_facts_unrouted", "id", sqlite_where=text("routed_us IS NULL"),
          postgresql_where=text("routed_us IS NULL")),
    sqlite_autoincrement=True,
)

# One message to one destination: a fact's, or a digest's (fact_id NULL, the facts
# it names in `details`) that the deliveries `folded` into it point to by digest_id.
# A sender claims a pending one by setting `claimed_until_us` (a lease: a sender that
# dies lets it expire, so each is sent at least once). `last_error` names what went
# wrong, never a URL or a secret.
DELIVERY_STATUSES = ("pending", "sent", "failed", "folded")
alert_deliveries = Table(
    "alert_deliveries",
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True,
           autoincrement=True),
    Column("fact_id", BigInteger, nullable=True),
    Column("project_id", Integer, nullable=False),
    Column("destination", Text, nullable=False),  # the destination's name
    Column("status", String(16), nullable=False),  # one of DELIVERY_STATUSES
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_us", BigInteger, nullable=False),
    Column("claimed_until_us", BigInteger, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_us", BigInteger, nullable=False),
    Column("sent_us", BigInteger, nullable=True),
    Column("digest_id", BigInteger, nullable=True),
    Column("details", JSON, nullable=True),
    Index("ix_alert_deliveries_status_next", "status", "next_attempt_us"),
    Index("ix_alert_deliveries_destination_sent", "destination", "sent_us"),
    Index("ix_alert_deliveries_fact", "fact_id"),
    sqlite_autoincrement=True,
)

# Per (project, rule, subject), whether a threshold rule (error_rate, latency) is
# firing, so that it alerts once when crossed and once when recovered.
alert_state = Table(
    "alert_state",
    metadata,
    Column("project_id", Integer, primary_key=True),
    Column("rule_key", String(64), primary_key=True),
    Column("subject", Text, primary_key=True),
    Column("state", String(16), nullable=False),  # firing, ok
    Column("since_us", BigInteger, nullable=False),
)
