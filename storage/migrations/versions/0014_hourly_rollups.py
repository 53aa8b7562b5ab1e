"""Hourly request rollups with coarse latency buckets, beside the per-minute ones, for
the performance page's long ranges, and an index on the per-minute latency rows by
time (their primary key leads with the route); backfilled from the per-minute rollups, so that
every hour already stored reads the same counts as its minutes.

A coarse bucket is ceil(fine / 5) (sounding/histogram.coarse_of): written here in
SQL, where integer division truncates toward zero in both SQLite and PostgreSQL.

Revision ID: 0014
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

# (per-minute rollups, per-minute latency, hourly rollups, hourly latency)
PAIRS = (
    ("request_rollups", "request_latency", "request_rollups_hourly",
     "request_latency_hourly"),
    ("metric_request_rollups", "metric_request_latency", "metric_request_rollups_hourly",
     "metric_request_latency_hourly"),
)
KEY = "project_id, service, env, method, route"
HOUR = "minute - minute % 3600"
COARSE = "CASE WHEN bucket > 0 THEN (bucket + 4) / 5 ELSE -((-bucket) / 5) END"


def _key_columns() -> list[sa.Column]:
    return [
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('service', sa.String(length=200), nullable=False),
        sa.Column('env', sa.String(length=200), nullable=False),
        sa.Column('method', sa.String(length=16), nullable=False),
        sa.Column('route', sa.String(length=500), nullable=False),
        sa.Column('hour', sa.BigInteger(), nullable=False),
    ]


def upgrade() -> None:
    for minute_rollups, minute_latency, rollups, latency in PAIRS:
        # Ranges of minutes of every route: the primary key leads with the route.
        op.create_index(f'ix_{minute_latency}_project_minute', minute_latency,
                        ['project_id', 'minute'], unique=False)
        op.create_table(
            rollups, *_key_columns(),
            sa.Column('count', sa.BigInteger(), nullable=False),
            sa.Column('error_count', sa.BigInteger(), nullable=False),
            sa.Column('duration_sum_ms', sa.Float(), nullable=False),
            sa.PrimaryKeyConstraint('project_id', 'service', 'env', 'method', 'route', 'hour'))
        op.create_index(f'ix_{rollups}_project_hour', rollups, ['project_id', 'hour'],
                        unique=False)
        op.create_table(
            latency, *_key_columns(),
            sa.Column('bucket', sa.Integer(), nullable=False),
            sa.Column('count', sa.BigInteger(), nullable=False),
            sa.PrimaryKeyConstraint('project_id', 'service', 'env', 'method', 'route', 'hour',
                                    'bucket'))
        op.create_index(f'ix_{latency}_project_hour', latency, ['project_id', 'hour'],
                        unique=False)
        op.execute(
            f"INSERT INTO {rollups} ({KEY}, hour, count, error_count, duration_sum_ms) "
            f"SELECT {KEY}, {HOUR}, sum(count), sum(error_count), sum(duration_sum_ms) "
            f"FROM {minute_rollups} GROUP BY {KEY}, {HOUR}")
        op.execute(
            f"INSERT INTO {latency} ({KEY}, hour, bucket, count) "
            f"SELECT {KEY}, {HOUR}, {COARSE}, sum(count) "
            f"FROM {minute_latency} GROUP BY {KEY}, {HOUR}, {COARSE}")


def downgrade() -> None:
    for _minute_rollups, _minute_latency, rollups, latency in reversed(PAIRS):
        op.drop_index(f'ix_{latency}_project_hour', table_name=latency)
        op.drop_table(latency)
        op.drop_index(f'ix_{rollups}_project_hour', table_name=rollups)
        op.drop_table(rollups)
    for _minute_rollups, minute_latency, _rollups, _latency in reversed(PAIRS):
        op.drop_index(f'ix_{minute_latency}_project_minute', table_name=minute_latency)
