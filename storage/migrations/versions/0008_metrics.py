"""Metrics: series and points, the state of cumulative-to-delta conversion, and the
request rollups fed by HTTP server duration metrics (apart from the others, so that
the performance queries never count one request twice).

Revision ID: 0008
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_ROLLUP_KEY = ("project_id", "service", "env", "method", "route", "minute")


def _rollup_key() -> list[sa.Column]:
    return [
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('service', sa.String(length=200), nullable=False),
        sa.Column('env', sa.String(length=200), nullable=False),
        sa.Column('method', sa.String(length=16), nullable=False),
        sa.Column('route', sa.String(length=500), nullable=False),
        sa.Column('minute', sa.BigInteger(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table('metric_request_rollups',
    *_rollup_key(),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('error_count', sa.BigInteger(), nullable=False),
    sa.Column('duration_sum_ms', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint(*_ROLLUP_KEY)
    )
    op.create_index('ix_metric_request_rollups_project_minute', 'metric_request_rollups',
                    ['project_id', 'minute'], unique=False)
    op.create_table('metric_request_latency',
    *_rollup_key(),
    sa.Column('bucket', sa.Integer(), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint(*_ROLLUP_KEY, 'bucket')
    )
    op.create_table('metric_series',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('series_key', sa.LargeBinary(length=16), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('unit', sa.Text(), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('temporality', sa.Integer(), nullable=False),
    sa.Column('monotonic', sa.Integer(), nullable=False),
    sa.Column('points', sa.String(length=8), nullable=False),
    sa.Column('service_name', sa.Text(), nullable=False),
    sa.Column('scope_name', sa.Text(), nullable=False),
    sa.Column('resource_id', sa.BigInteger(), nullable=False),
    sa.Column('attributes', sa.JSON(), nullable=False),
    sa.Column('received_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'series_key')
    )
    op.create_index('ix_metric_series_project_name', 'metric_series', ['project_id', 'name'],
                    unique=False)
    op.create_table('metric_points',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('series_key', sa.LargeBinary(length=16), nullable=False),
    sa.Column('time_ns', sa.BigInteger(), nullable=False),
    sa.Column('start_ns', sa.BigInteger(), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('sum', sa.Float(), nullable=True),
    sa.Column('min', sa.Float(), nullable=True),
    sa.Column('max', sa.Float(), nullable=True),
    sa.Column('buckets', sa.JSON(), nullable=True),
    sa.Column('flags', sa.Integer(), nullable=False),
    sa.Column('received_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'series_key', 'time_ns')
    )
    op.create_index('ix_metric_points_project_time', 'metric_points', ['project_id', 'time_ns'],
                    unique=False)
    op.create_table('metric_cumulative',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('series_key', sa.LargeBinary(length=16), nullable=False),
    sa.Column('start_ns', sa.BigInteger(), nullable=False),
    sa.Column('time_ns', sa.BigInteger(), nullable=False),
    sa.Column('state', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'series_key')
    )


def downgrade() -> None:
    op.drop_table('metric_cumulative')
    op.drop_index('ix_metric_points_project_time', table_name='metric_points')
    op.drop_table('metric_points')
    op.drop_index('ix_metric_series_project_name', table_name='metric_series')
    op.drop_table('metric_series')
    op.drop_table('metric_request_latency')
    op.drop_index('ix_metric_request_rollups_project_minute',
                  table_name='metric_request_rollups')
    op.drop_table('metric_request_rollups')
