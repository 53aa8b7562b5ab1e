"""API tokens with scopes: `api_tokens` (personal, of an account, or service, of none;
scopes, all projects or those of `api_token_projects`, an optional expiry, the last
use) replaces `user_tokens`. A personal token made before scopes keeps working as it
did, acting with its account's role: it gets the `admin` scope over all projects.

Revision ID: 0022
Revises: 0021
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'api_tokens',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=True),
        sa.Column('scopes', sa.String(length=200), nullable=False),
        sa.Column('all_projects', sa.Boolean(), nullable=False),
        sa.Column('created_us', sa.BigInteger(), nullable=False),
        sa.Column('created_by', sa.String(length=320), nullable=False),
        sa.Column('expires_us', sa.BigInteger(), nullable=True),
        sa.Column('last_used_us', sa.BigInteger(), nullable=True),
        sa.Column('revoked_us', sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token_hash'),
    )
    op.create_index('ix_api_tokens_user', 'api_tokens', ['user_id'], unique=False)
    op.create_table(
        'api_token_projects',
        sa.Column('token_id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['token_id'], ['api_tokens.id']),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.PrimaryKeyConstraint('token_id', 'project_id'),
    )
    # Ids are kept (the pages and the CLI name tokens by id); PostgreSQL's sequence
    # then starts after them.
    op.execute(
        "INSERT INTO api_tokens (id, token_hash, name, user_id, scopes, all_projects, "
        "created_us, created_by, revoked_us) "
        "SELECT t.id, t.token_hash, t.name, t.user_id, 'admin', true, t.created_us, "
        "u.email, t.revoked_us FROM user_tokens t JOIN users u ON u.id = t.user_id")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("SELECT setval(pg_get_serial_sequence('api_tokens', 'id'), "
                   "COALESCE((SELECT MAX(id) FROM api_tokens), 0) + 1, false)")
    op.drop_index('ix_user_tokens_user', table_name='user_tokens')
    op.drop_table('user_tokens')


def downgrade() -> None:
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
    # Personal tokens go back with their account's role (a narrower one cannot be
    # kept: revoked, so that going back never widens a token); service tokens, which
    # have no account, are dropped.
    op.execute(
        "INSERT INTO user_tokens (id, user_id, token_hash, name, created_us, revoked_us) "
        "SELECT id, user_id, token_hash, name, created_us, CASE WHEN scopes = 'admin' "
        "AND all_projects AND expires_us IS NULL THEN revoked_us "
        "ELSE COALESCE(revoked_us, created_us) END "
        "FROM api_tokens WHERE user_id IS NOT NULL")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("SELECT setval(pg_get_serial_sequence('user_tokens', 'id'), "
                   "COALESCE((SELECT MAX(id) FROM user_tokens), 0) + 1, false)")
    op.drop_table('api_token_projects')
    op.drop_index('ix_api_tokens_user', table_name='api_tokens')
    op.drop_table('api_tokens')
