"""An index for the trace search (storage/queries/trace_search.py), so that
`status=error` finds and counts every failed trace of a week instead of reading every
span of its range: the failed spans alone (status ERROR), by project and start,
partial, so ingest writes it for the few spans that failed only.

(An index by name was tried too, and left out: with a few hundred operation names
each commit wrote into a few hundred of its pages, tripling the SQLite write-ahead
log per commit.)

On PostgreSQL it is made on the partitioned table, which makes it on every day
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


def downgrade() -> None:
    op.drop_index('ix_spans_project_errors', table_name='spans')
