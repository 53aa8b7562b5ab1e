"""Projects, the API keys that send to them, and their resources."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Column, ForeignKey, Integer, String, Table

from storage import rows
from storage.schema.columns import form_columns, metadata

projects = Table(
    "projects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("created_us", BigInteger, nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    # SHA-256 of the key, hex. Keys are random, so a fast hash is enough; the key
    # itself is never stored.
    Column("key_hash", String(64), nullable=False, unique=True),
    # First 12 hex characters of the hash: shown by `keys list`, taken by `keys revoke`.
    Column("key_id", String(12), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("revoked_us", BigInteger, nullable=True),
)

# Resources, once per project (storage/rows.py says more).
resources = Table(
    rows.RESOURCES.table,
    metadata,
    *form_columns(rows.RESOURCES, primary_key=("id",), id={"autoincrement": False}),
)

# A project's policy set on the dashboard or the read API (migration 0024,
# storage/policies.py): its scrubbing settings, inbound filters and detector
# thresholds, in their mapping
# form (model/policy.py), over the configuration's. `updated_by` names who set it.
project_policies = Table(
    "project_policies",
    metadata,
    Column("project_id", Integer, ForeignKey("projects.id"), primary_key=True),
    Column("scrubbing", JSON, nullable=False),
    Column("filters", JSON, nullable=False),
    # The performance detectors' thresholds (model/detectors.py; migration 0032);
    # NULL in a row stored before it, read as none set.
    Column("detectors", JSON, nullable=True),
    Column("updated_us", BigInteger, nullable=False),
    Column("updated_by", String(200), nullable=False),
)
