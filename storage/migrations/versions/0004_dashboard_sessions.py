"""Dashboard sessions kept in the database, so that logging out ends a session on
every collector.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('dashboard_sessions',
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_us', sa.BigInteger(), nullable=False),
    sa.Column('expires_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('token_hash')
    )
    op.create_index('ix_dashboard_sessions_expires', 'dashboard_sessions', ['expires_us'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_dashboard_sessions_expires', table_name='dashboard_sessions')
    op.drop_table('dashboard_sessions')
