"""Where an error came from: the service, environment and release of its resource,
the time of the log record it came from, and its occurrence key, unique per project
where set, so that one exception sent as a span event and as a log record is stored
and counted once.

Existing rows keep NULL in every new column: they were stored before errors had
keys, and NULL keys are never merged.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

COLUMNS = ("service", "environment", "release", "log_time_ns", "occurrence_key")


def upgrade() -> None:
    op.add_column('error_events', sa.Column('service', sa.Text(), nullable=True))
    op.add_column('error_events', sa.Column('environment', sa.Text(), nullable=True))
    op.add_column('error_events', sa.Column('release', sa.Text(), nullable=True))
    op.add_column('error_events', sa.Column('log_time_ns', sa.BigInteger(), nullable=True))
    op.add_column('error_events', sa.Column('occurrence_key', sa.String(length=32),
                                            nullable=True))
    keyed = sa.text('occurrence_key IS NOT NULL')
    op.create_index('uq_error_events_occurrence', 'error_events',
                    ['project_id', 'occurrence_key'], unique=True,
                    sqlite_where=keyed, postgresql_where=keyed)


def downgrade() -> None:
    op.drop_index('uq_error_events_occurrence', table_name='error_events')
    # A batch: SQLite drops columns by copying the table (PostgreSQL alters it).
    with op.batch_alter_table('error_events') as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
