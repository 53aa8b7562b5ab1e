"""The outbox: records an exporter has acknowledged and still has to send on
(exporters/forward), kept durable until the upstream takes them.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('outbox',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('queue', sa.String(length=64), nullable=False),
    sa.Column('signal', sa.String(length=16), nullable=False),
    sa.Column('body', sa.LargeBinary(), nullable=False),
    sa.Column('content_type', sa.String(length=64), nullable=False),
    sa.Column('content_encoding', sa.String(length=16), nullable=False),
    sa.Column('records', sa.Integer(), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('enqueued_us', sa.BigInteger(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sqlite_autoincrement=True
    )
    op.create_index('ix_outbox_queue_signal_id', 'outbox', ['queue', 'signal', 'id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_outbox_queue_signal_id', table_name='outbox')
    op.drop_table('outbox')
