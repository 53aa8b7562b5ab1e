"""Alert destinations and rules made on a project's dashboard page; a destination's
credentials are kept sealed (AES-GCM), never in its plain `config`.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('alert_destinations',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('type', sa.String(length=16), nullable=False),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('sealed', sa.LargeBinary(), nullable=False),
    sa.Column('created_us', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('project_id', 'name', name='uq_alert_destinations_project_name')
    )
    op.create_table('alert_rules',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('rule', sa.JSON(), nullable=False),
    sa.Column('created_us', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_alert_rules_project', 'alert_rules', ['project_id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_alert_rules_project', table_name='alert_rules')
    op.drop_table('alert_rules')
    op.drop_table('alert_destinations')
