"""Limits per project, the buckets and quota counts every collector shares, usage per
hour, and spike protection (docs/limits.md).

Revision ID: 0025
Revises: 0027
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'project_limits',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('category', sa.String(length=16), nullable=False),
        sa.Column('rate', sa.Float(), nullable=False),
        sa.Column('burst', sa.Float(), nullable=False),
        sa.Column('quota', sa.BigInteger(), nullable=False),
        sa.Column('period', sa.String(length=8), nullable=False),
        sa.Column('updated_us', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.PrimaryKeyConstraint('project_id', 'category'),
    )
    op.create_table(
        'limit_buckets',
        sa.Column('project_id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('category', sa.String(length=16), nullable=False),
        sa.Column('tokens', sa.Float(), nullable=False),
        sa.Column('last_s', sa.Float(), nullable=False),
        sa.Column('period', sa.BigInteger(), nullable=False),
        sa.Column('used', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('project_id', 'category'),
    )
    op.create_table(
        'usage_hourly',
        sa.Column('project_id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('hour', sa.BigInteger(), nullable=False),
        sa.Column('category', sa.String(length=16), nullable=False),
        sa.Column('outcome', sa.String(length=24), nullable=False),
        sa.Column('reason', sa.String(length=64), nullable=False),
        sa.Column('records', sa.BigInteger(), nullable=False),
        sa.Column('requests', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('project_id', 'hour', 'category', 'outcome', 'reason'),
    )
    op.create_index('ix_usage_hourly_hour', 'usage_hourly', ['hour'], unique=False)
    op.create_table(
        'spike_protection',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('multiple', sa.Float(), nullable=False),
        sa.Column('active', sa.Boolean(), nullable=False),
        sa.Column('cap', sa.Float(), nullable=False),
        sa.Column('category', sa.String(length=16), nullable=False),
        sa.Column('changed_us', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.PrimaryKeyConstraint('project_id'),
    )


def downgrade() -> None:
    op.drop_table('spike_protection')
    op.drop_index('ix_usage_hourly_hour', table_name='usage_hourly')
    op.drop_table('usage_hourly')
    op.drop_table('limit_buckets')
    op.drop_table('project_limits')
