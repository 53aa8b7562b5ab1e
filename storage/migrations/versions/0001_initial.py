"""Initial schema.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('deploys',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('git_sha', sa.String(length=128), nullable=False),
    sa.Column('version', sa.Text(), nullable=True),
    sa.Column('env', sa.String(length=200), nullable=True),
    sa.Column('deployer', sa.Text(), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('ts_us', sa.BigInteger(), nullable=False),
    sa.Column('received_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_deploys_project_ts', 'deploys', ['project_id', 'ts_us'], unique=False)
    op.create_table('error_events',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=255), nullable=False),
    sa.Column('ts_us', sa.BigInteger(), nullable=False),
    sa.Column('received_us', sa.BigInteger(), nullable=False),
    sa.Column('exception_class', sa.Text(), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('backtrace', sa.JSON(), nullable=False),
    sa.Column('params', sa.JSON(), nullable=True),
    sa.Column('source_context', sa.JSON(), nullable=True),
    sa.Column('request_id', sa.Text(), nullable=True),
    sa.Column('user_id', sa.Text(), nullable=True),
    sa.Column('trace_id', sa.String(length=32), nullable=True),
    sa.Column('span_id', sa.String(length=16), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_error_events_group_ts', 'error_events', ['project_id', 'fingerprint', 'ts_us'], unique=False)
    op.create_index('ix_error_events_trace', 'error_events', ['project_id', 'trace_id'], unique=False)
    op.create_table('error_group_hourly',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=255), nullable=False),
    sa.Column('hour', sa.BigInteger(), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'fingerprint', 'hour')
    )
    op.create_table('error_groups',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=255), nullable=False),
    sa.Column('exception_class', sa.Text(), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('first_seen_us', sa.BigInteger(), nullable=False),
    sa.Column('last_seen_us', sa.BigInteger(), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('resolved_us', sa.BigInteger(), nullable=True),
    sa.Column('reopen_count', sa.Integer(), nullable=False),
    sa.Column('last_reopened_us', sa.BigInteger(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('project_id', 'fingerprint', name='uq_error_groups_project_fingerprint')
    )
    op.create_index('ix_error_groups_project_last_seen', 'error_groups', ['project_id', 'last_seen_us'], unique=False)
    op.create_table('error_status_changes',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=255), nullable=False),
    sa.Column('from_status', sa.String(length=16), nullable=False),
    sa.Column('to_status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.String(length=32), nullable=False),
    sa.Column('at_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_error_status_changes_group', 'error_status_changes', ['project_id', 'fingerprint', 'at_us'], unique=False)
    op.create_table('projects',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('request_latency',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('service', sa.String(length=200), nullable=False),
    sa.Column('env', sa.String(length=200), nullable=False),
    sa.Column('method', sa.String(length=16), nullable=False),
    sa.Column('route', sa.String(length=500), nullable=False),
    sa.Column('minute', sa.BigInteger(), nullable=False),
    sa.Column('bucket', sa.Integer(), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'service', 'env', 'method', 'route', 'minute', 'bucket')
    )
    op.create_table('request_rollups',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('service', sa.String(length=200), nullable=False),
    sa.Column('env', sa.String(length=200), nullable=False),
    sa.Column('method', sa.String(length=16), nullable=False),
    sa.Column('route', sa.String(length=500), nullable=False),
    sa.Column('minute', sa.BigInteger(), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('error_count', sa.BigInteger(), nullable=False),
    sa.Column('duration_sum_ms', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'service', 'env', 'method', 'route', 'minute')
    )
    op.create_index('ix_request_rollups_project_minute', 'request_rollups', ['project_id', 'minute'], unique=False)
    op.create_table('spans',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('trace_id', sa.String(length=32), nullable=False),
    sa.Column('span_id', sa.String(length=16), nullable=False),
    sa.Column('parent_span_id', sa.String(length=16), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('kind', sa.Integer(), nullable=False),
    sa.Column('start_ns', sa.BigInteger(), nullable=False),
    sa.Column('end_ns', sa.BigInteger(), nullable=False),
    sa.Column('status_code', sa.Integer(), nullable=False),
    sa.Column('status_message', sa.Text(), nullable=False),
    sa.Column('service_name', sa.Text(), nullable=False),
    sa.Column('scope_name', sa.Text(), nullable=False),
    sa.Column('category', sa.String(length=16), nullable=False),
    sa.Column('resource_attributes', sa.JSON(), nullable=False),
    sa.Column('attributes', sa.JSON(), nullable=False),
    sa.Column('semantic', sa.JSON(), nullable=False),
    sa.Column('events', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'trace_id', 'span_id')
    )
    op.create_index('ix_spans_project_start', 'spans', ['project_id', 'start_ns'], unique=False)
    op.create_table('api_keys',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('key_id', sa.String(length=12), nullable=False),
    sa.Column('created_us', sa.BigInteger(), nullable=False),
    sa.Column('revoked_us', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('key_hash')
    )


def downgrade() -> None:
    op.drop_table('api_keys')
    op.drop_index('ix_spans_project_start', table_name='spans')
    op.drop_table('spans')
    op.drop_index('ix_request_rollups_project_minute', table_name='request_rollups')
    op.drop_table('request_rollups')
    op.drop_table('request_latency')
    op.drop_table('projects')
    op.drop_index('ix_error_status_changes_group', table_name='error_status_changes')
    op.drop_table('error_status_changes')
    op.drop_index('ix_error_groups_project_last_seen', table_name='error_groups')
    op.drop_table('error_groups')
    op.drop_table('error_group_hourly')
    op.drop_index('ix_error_events_trace', table_name='error_events')
    op.drop_index('ix_error_events_group_ts', table_name='error_events')
    op.drop_table('error_events')
    op.drop_index('ix_deploys_project_ts', table_name='deploys')
    op.drop_table('deploys')
