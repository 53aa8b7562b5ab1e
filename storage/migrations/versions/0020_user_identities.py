"""Single sign-on: `user_identities` ties an account to the subject (`sub`) an OpenID
provider names it by, and `dashboard_sessions.provider` names the provider a session
logged in through (its logout ends there too).

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'user_identities',
        sa.Column('provider', sa.String(length=64), nullable=False),
        sa.Column('subject', sa.String(length=255), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('created_us', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id']),
        sa.PrimaryKeyConstraint('provider', 'subject'),
    )
    op.create_index('ix_user_identities_user', 'user_identities', ['user_id'], unique=False)
    op.add_column('dashboard_sessions', sa.Column('provider', sa.String(length=64),
                                                  nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('dashboard_sessions') as batch:
        batch.drop_column('provider')
    op.drop_index('ix_user_identities_user', table_name='user_identities')
    op.drop_table('user_identities')
