"""Two indexes for the trace search (storage/queries/trace_search.py), so that it
finds and counts every match of a week instead of reading every span of its range:

- the failed spans alone (status ERROR), by project and start, for `status=error`:
  partial, so ingest writes it for the few spans that failed only;
- spans by project, name and start, for a name filter: the search lists the
  project's names by skipping along it (storage/queries/span_names.py) and walks
  the spans of the names that match.

On PostgreSQL each is made on the partitioned table, which makes it on every day
partition and on those made later.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

FAILED = sa.text("status_code = 2")


def upgrade() -> None:
    op.create_index('ix_spans_project_errors', 'spans', ['project_id', 'start_ns'],
                    sqlite_where=FAILED, postgresql_where=FAILED)
    op.create_index('ix_spans_project_name', 'spans', ['project_id', 'name', 'start_ns'])


def downgrade() -> None:
    op.drop_index('ix_spans_project_name', table_name='spans')
    op.drop_index('ix_spans_project_errors', table_name='spans')
