"""Work queued in the database for later: the forwarding exporter's outbox, and the
leases that let one collector of a database do maintenance at a time."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, LargeBinary, String, Table

from storage.schema.columns import metadata

# Records an exporter acknowledged and still has to send on (migration 0005): the
# forwarding exporter's durable queue (storage/outbox.py). `queue` is the exporter's
# name, so that two forwarding exporters on one store keep their rows apart. The id
# is a 64-bit counter on PostgreSQL (rows come and go for ever) and SQLite's rowid.
outbox = Table(
    "outbox",
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True,
           autoincrement=True),
    Column("queue", String(64), nullable=False),
    Column("signal", String(16), nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("content_type", String(64), nullable=False),
    Column("content_encoding", String(16), nullable=False),
    Column("records", Integer, nullable=False),
    Column("size", Integer, nullable=False),
    Column("enqueued_us", BigInteger, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_us", BigInteger, nullable=False),
    Index("ix_outbox_queue_signal_id", "queue", "signal", "id"),
    # Ids never reused on SQLite either: the sender pages through rows by id.
    sqlite_autoincrement=True,
)

# Leases on maintenance work that one collector of a database does at a time (the
# retention sweep, storage/retention/sweep.py): taken by an atomic UPDATE where the lease
# has expired or is already the holder's (migration 0012).
maintenance_leases = Table(
    "maintenance_leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(200), nullable=False),
    Column("expires_us", BigInteger, nullable=False),
)
