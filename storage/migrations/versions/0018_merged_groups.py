"""Merged error groups: `error_groups.merged_into`, the id of the group a group was
merged into (NULL: not merged). A merged group keeps its own occurrences, hourly
counts and facets; reads add them to the group it was merged into, so that undoing a
merge is clearing the column (storage/groups/merge.py).

`error_status_changes.detail`: what a merge or an unmerge named ("#12, #14"), shown
in the group's history. NULL for every other change.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('error_groups', sa.Column('merged_into', sa.Integer(), nullable=True))
    op.create_index('ix_error_groups_project_merged_into', 'error_groups',
                    ['project_id', 'merged_into'])
    op.add_column('error_status_changes', sa.Column('detail', sa.String(length=200),
                                                    nullable=True))


def downgrade() -> None:
    op.drop_index('ix_error_groups_project_merged_into', table_name='error_groups')
    # A batch: SQLite drops a column by copying the table (PostgreSQL alters it).
    with op.batch_alter_table('error_groups') as batch:
        batch.drop_column('merged_into')
    with op.batch_alter_table('error_status_changes') as batch:
        batch.drop_column('detail')
