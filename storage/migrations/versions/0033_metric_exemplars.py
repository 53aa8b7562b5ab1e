"""Metric exemplars: a few per metric series and minute (at most 4, one a slot), the
link from a metric to the trace of a call it measured. A new table only: the points
stored before kept none.

Revision ID: 0033
Revises: 0031
"""

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'metric_exemplars',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('series_key', sa.LargeBinary(length=16), nullable=False),
        sa.Column('minute', sa.BigInteger(), nullable=False),
        sa.Column('slot', sa.Integer(), nullable=False),
        sa.Column('time_ns', sa.BigInteger(), nullable=False),
        sa.Column('value', sa.Float(), nullable=True),
        sa.Column('trace_id', sa.LargeBinary(length=16), nullable=False),
        sa.Column('span_id', sa.LargeBinary(length=8), nullable=False),
        sa.PrimaryKeyConstraint('project_id', 'series_key', 'minute', 'slot'))
    op.create_index('ix_metric_exemplars_project_trace', 'metric_exemplars',
                    ['project_id', 'trace_id'], unique=False)
    op.create_index('ix_metric_exemplars_project_minute', 'metric_exemplars',
                    ['project_id', 'minute'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_metric_exemplars_project_minute', table_name='metric_exemplars')
    op.drop_index('ix_metric_exemplars_project_trace', table_name='metric_exemplars')
    op.drop_table('metric_exemplars')
