"""`deploys.service`: the service a deploy names (optional), whose requests alone its
before/after comparison uses. Deploys recorded before have none (NULL): they are
compared over every service, as before.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('deploys', sa.Column('service', sa.String(length=200), nullable=True))


def downgrade() -> None:
    # A batch: SQLite drops a column by copying the table (PostgreSQL alters it).
    with op.batch_alter_table('deploys') as batch:
        batch.drop_column('service')
