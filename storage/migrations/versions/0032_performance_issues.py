"""Performance issues (model/detectors.py): an error group's `issue_type`, `error` for
the groups of errors, `performance` for those the writer's detectors found in traces
(storage/writer/detect.py). Every group stored before is an error group. And a
project's stored policy gains its detectors' thresholds (`project_policies.detectors`,
NULL: none set).

Revision ID: 0032
Revises: 0024
"""

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A constant default: SQLite adds the column without copying the table.
    op.add_column('error_groups', sa.Column('issue_type', sa.String(length=16),
                                            nullable=False, server_default='error'))
    op.add_column('project_policies', sa.Column('detectors', sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column('project_policies', 'detectors')
    op.drop_column('error_groups', 'issue_type')
