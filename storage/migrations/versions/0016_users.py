"""Team accounts: users with Argon2id password hashes and roles, their personal API
tokens (hashed), the user of a dashboard session, and failed logins for the throttle.

Revision ID: 0016
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'users',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('email', sa.String(length=320), nullable=False),
        sa.Column('password_hash', sa.String(length=200), nullable=False),
        sa.Column('role', sa.String(length=16), nullable=False),
        sa.Column('created_us', sa.BigInteger(), nullable=False),
        sa.Column('disabled_us', sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('email'),
    )
    op.create_table(
        'user_tokens',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('created_us', sa.BigInteger(), nullable=False),
        sa.Column('revoked_us', sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash'),
    )
    op.create_index('ix_user_tokens_user', 'user_tokens', ['user_id'], unique=False)
    op.create_table(
        'login_failures',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('subject', sa.String(length=400), nullable=False),
        sa.Column('at_us', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_login_failures_subject_at', 'login_failures', ['subject', 'at_us'],
                    unique=False)
    op.create_index('ix_login_failures_at', 'login_failures', ['at_us'], unique=False)
    op.add_column('dashboard_sessions', sa.Column('user_id', sa.Integer(), nullable=True))
    op.create_index('ix_dashboard_sessions_user', 'dashboard_sessions', ['user_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_dashboard_sessions_user', table_name='dashboard_sessions')
    with op.batch_alter_table('dashboard_sessions') as batch:
        batch.drop_column('user_id')
    op.drop_index('ix_login_failures_at', table_name='login_failures')
    op.drop_index('ix_login_failures_subject_at', table_name='login_failures')
    op.drop_table('login_failures')
    op.drop_index('ix_user_tokens_user', table_name='user_tokens')
    op.drop_table('user_tokens')
    op.drop_table('users')
