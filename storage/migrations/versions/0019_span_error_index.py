"""An index of the failed spans alone (status ERROR), by project and start: the trace
search for `status=error` walks it instead of every span of its range, so that it
finds and counts every failed trace of a week (storage/queries/trace_search.py).

Partial, so ingest writes it for the few spans that failed only. On PostgreSQL the
index is made on the partitioned table, which makes it on every day partition and
on those made later.

Revision ID: 0019
Revises: 0017 (0018 is made beside this one; whoever lands second re-chains)
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0017"
branch_labels = None
depends_on = None

FAILED = sa.text("status_code = 2")


def upgrade() -> None:
    op.create_index('ix_spans_project_errors', 'spans', ['project_id', 'start_ns'],
                    sqlite_where=FAILED, postgresql_where=FAILED)


def downgrade() -> None:
    op.drop_index('ix_spans_project_errors', table_name='spans')
