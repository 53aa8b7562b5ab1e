"""Per-project roles of team accounts: `user_project_roles` (an account's role in one
project, above its global one). `users.role` may now also be `none` (no project
beyond those listed), which needs no change to its column.

Revision ID: 0030
Revises: 0025
"""

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'user_project_roles',
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('role', sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id']),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.PrimaryKeyConstraint('user_id', 'project_id'),
    )


def downgrade() -> None:
    op.drop_table('user_project_roles')
