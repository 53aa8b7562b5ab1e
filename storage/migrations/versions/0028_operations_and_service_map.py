"""Operation and edge rollups, per minute and per hour, and the peer aliases: the
service map and the operations page (issue 27). Each rollup row holds its latency
buckets (`buckets`, a JSON object of counts by bucket), as the metric-fed request
rollups do since 0021. New tables only: nothing to carry over.

Revision ID: 0028
Revises: 0030
"""

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0030"
branch_labels = None
depends_on = None

OPERATION_KEY = (
    ("service", 200), ("env", 200), ("kind", 16), ("peer", 500), ("operation", 1000))
EDGE_KEY = (("service", 200), ("env", 200), ("peer_type", 16), ("peer", 500))
ROLLUPS = (
    ("operation_rollups", OPERATION_KEY, "minute"),
    ("operation_rollups_hourly", OPERATION_KEY, "hour"),
    ("edge_rollups", EDGE_KEY, "minute"),
    ("edge_rollups_hourly", EDGE_KEY, "hour"),
)


def upgrade() -> None:
    for name, key, time in ROLLUPS:
        op.create_table(
            name,
            sa.Column('project_id', sa.Integer(), nullable=False),
            *(sa.Column(column, sa.String(length=length), nullable=False)
              for column, length in key),
            sa.Column(time, sa.BigInteger(), nullable=False),
            sa.Column('count', sa.BigInteger(), nullable=False),
            sa.Column('error_count', sa.BigInteger(), nullable=False),
            sa.Column('duration_sum_ms', sa.Float(), nullable=False),
            sa.Column('buckets', sa.Text(), server_default='{}', nullable=False),
            sa.PrimaryKeyConstraint('project_id', *(column for column, _ in key), time))
        op.create_index(f'ix_{name}_project_{time}', name, ['project_id', time], unique=False)
    op.create_table(
        'peer_aliases',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('service', sa.String(length=200), nullable=False),
        sa.Column('peer_type', sa.String(length=16), nullable=False),
        sa.Column('peer', sa.String(length=500), nullable=False),
        sa.Column('callee', sa.String(length=200), nullable=False),
        sa.Column('seen_us', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('project_id', 'service', 'peer_type', 'peer'))


def downgrade() -> None:
    op.drop_table('peer_aliases')
    for name, _key, time in reversed(ROLLUPS):
        op.drop_index(f'ix_{name}_project_{time}', table_name=name)
        op.drop_table(name)
