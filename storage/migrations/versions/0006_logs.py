"""Logs: one narrow row per OTLP log record, keyed by a hash of the record so that
a retried request adds no row; resources shared with spans.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('logs',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('record_key', sa.LargeBinary(length=16), nullable=False),
    sa.Column('time_ns', sa.BigInteger(), nullable=False),
    sa.Column('observed_ns', sa.BigInteger(), nullable=False),
    sa.Column('severity_number', sa.Integer(), nullable=False),
    sa.Column('severity_text', sa.Text(), nullable=False),
    sa.Column('trace_id', sa.LargeBinary(length=16), nullable=False),
    sa.Column('span_id', sa.LargeBinary(length=8), nullable=False),
    sa.Column('flags', sa.BigInteger(), nullable=False),
    sa.Column('event_name', sa.Text(), nullable=False),
    sa.Column('service_name', sa.Text(), nullable=False),
    sa.Column('scope_name', sa.Text(), nullable=False),
    sa.Column('resource_id', sa.BigInteger(), nullable=False),
    sa.Column('body_text', sa.Text(), nullable=False),
    sa.Column('attributes', sa.JSON(), nullable=False),
    sa.Column('body', sa.LargeBinary(), nullable=False),
    sa.Column('received_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'record_key')
    )
    op.create_index('ix_logs_project_time', 'logs', ['project_id', 'time_ns'], unique=False)
    op.create_index('ix_logs_project_trace', 'logs', ['project_id', 'trace_id'], unique=False)
    op.create_index('ix_logs_project_service_time', 'logs',
                    ['project_id', 'service_name', 'time_ns'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_logs_project_service_time', table_name='logs')
    op.drop_index('ix_logs_project_trace', table_name='logs')
    op.drop_index('ix_logs_project_time', table_name='logs')
    op.drop_table('logs')
