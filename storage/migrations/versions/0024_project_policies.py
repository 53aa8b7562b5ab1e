"""Per-project policies: `project_policies` holds the scrubbing settings and inbound
filters a project was given on the dashboard or the read API (storage/policies.py).

Revision ID: 0024
Revises: 0028
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'project_policies',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('scrubbing', sa.JSON(), nullable=False),
        sa.Column('filters', sa.JSON(), nullable=False),
        sa.Column('updated_us', sa.BigInteger(), nullable=False),
        sa.Column('updated_by', sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.PrimaryKeyConstraint('project_id'),
    )


def downgrade() -> None:
    op.drop_table('project_policies')
