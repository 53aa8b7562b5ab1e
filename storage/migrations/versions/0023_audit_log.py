"""The audit log: `audit_log`, one row per change of state, with who made it, what,
to what, and the before and after. Append-only: a trigger refuses every UPDATE (on
SQLite and PostgreSQL alike); rows are deleted only by the retention sweep.

Revision ID: 0023
Revises: 0022
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

REFUSED = "audit_log is append-only: its rows are never updated"


def upgrade() -> None:
    op.create_table(
        'audit_log',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('at_us', sa.BigInteger(), nullable=False),
        sa.Column('actor_kind', sa.String(length=16), nullable=False),
        sa.Column('actor_id', sa.String(length=64), nullable=True),
        sa.Column('actor_name', sa.String(length=320), nullable=False),
        sa.Column('action', sa.String(length=64), nullable=False),
        sa.Column('target_kind', sa.String(length=32), nullable=False),
        sa.Column('target_id', sa.String(length=200), nullable=True),
        sa.Column('project_id', sa.Integer(), nullable=True),
        sa.Column('before', sa.JSON(), nullable=True),
        sa.Column('after', sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_audit_log_at', 'audit_log', ['at_us'], unique=False)
    op.create_index('ix_audit_log_project_at', 'audit_log', ['project_id', 'at_us'],
                    unique=False)
    op.create_index('ix_audit_log_action_at', 'audit_log', ['action', 'at_us'], unique=False)
    op.create_index('ix_audit_log_actor_at', 'audit_log', ['actor_name', 'at_us'],
                    unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"""
            CREATE FUNCTION audit_log_no_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION '{REFUSED}'; END $$""")
        op.execute("CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log "
                   "FOR EACH ROW EXECUTE FUNCTION audit_log_no_update()")
    else:
        op.execute("CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log "
                   f"BEGIN SELECT RAISE(ABORT, '{REFUSED}'); END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_log_no_update ON audit_log")
        op.execute("DROP FUNCTION audit_log_no_update()")
    op.drop_index('ix_audit_log_actor_at', table_name='audit_log')
    op.drop_index('ix_audit_log_action_at', table_name='audit_log')
    op.drop_index('ix_audit_log_project_at', table_name='audit_log')
    op.drop_index('ix_audit_log_at', table_name='audit_log')
    op.drop_table('audit_log')
