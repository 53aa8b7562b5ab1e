"""Retention: the lease that lets one collector sweep at a time, and the indexes the
sweep finds a project's oldest occurrences and hourly counts by.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('maintenance_leases',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('holder', sa.String(length=200), nullable=False),
    sa.Column('expires_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('name')
    )
    op.create_index('ix_error_events_project_ts', 'error_events', ['project_id', 'ts_us'],
                    unique=False)
    op.create_index('ix_error_group_hourly_project_hour', 'error_group_hourly',
                    ['project_id', 'hour'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_error_group_hourly_project_hour', table_name='error_group_hourly')
    op.drop_index('ix_error_events_project_ts', table_name='error_events')
    op.drop_table('maintenance_leases')
