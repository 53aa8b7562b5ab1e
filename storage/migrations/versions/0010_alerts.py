"""Alerts: the facts that something happened (a new group, a regression, a deploy
made worse, a threshold crossed), the deliveries of each to a destination, and the
state of threshold rules. Facts are written in the transaction of the change that
causes them, so that none is lost or invented across a crash.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
UNROUTED = sa.text('routed_us IS NULL')


def upgrade() -> None:
    op.create_table('alert_facts',
    sa.Column('id', ID, autoincrement=True, nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('subject', sa.Text(), nullable=False),
    sa.Column('dedupe_key', sa.String(length=200), nullable=False),
    sa.Column('at_us', sa.BigInteger(), nullable=False),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.Column('created_us', sa.BigInteger(), nullable=False),
    sa.Column('routed_us', sa.BigInteger(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('project_id', 'dedupe_key', name='uq_alert_facts_project_dedupe_key'),
    sqlite_autoincrement=True
    )
    op.create_index('ix_alert_facts_project_id', 'alert_facts', ['project_id', 'id'],
                    unique=False)
    op.create_index('ix_alert_facts_unrouted', 'alert_facts', ['id'], unique=False,
                    sqlite_where=UNROUTED, postgresql_where=UNROUTED)
    op.create_table('alert_deliveries',
    sa.Column('id', ID, autoincrement=True, nullable=False),
    sa.Column('fact_id', sa.BigInteger(), nullable=True),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('destination', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_us', sa.BigInteger(), nullable=False),
    sa.Column('claimed_until_us', sa.BigInteger(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_us', sa.BigInteger(), nullable=False),
    sa.Column('sent_us', sa.BigInteger(), nullable=True),
    sa.Column('digest_id', sa.BigInteger(), nullable=True),
    sa.Column('details', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sqlite_autoincrement=True
    )
    op.create_index('ix_alert_deliveries_status_next', 'alert_deliveries',
                    ['status', 'next_attempt_us'], unique=False)
    op.create_index('ix_alert_deliveries_destination_sent', 'alert_deliveries',
                    ['destination', 'sent_us'], unique=False)
    op.create_index('ix_alert_deliveries_fact', 'alert_deliveries', ['fact_id'], unique=False)
    op.create_table('alert_state',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('rule_key', sa.String(length=64), nullable=False),
    sa.Column('subject', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('since_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'rule_key', 'subject')
    )


def downgrade() -> None:
    op.drop_table('alert_state')
    op.drop_index('ix_alert_deliveries_fact', table_name='alert_deliveries')
    op.drop_index('ix_alert_deliveries_destination_sent', table_name='alert_deliveries')
    op.drop_index('ix_alert_deliveries_status_next', table_name='alert_deliveries')
    op.drop_table('alert_deliveries')
    op.drop_index('ix_alert_facts_unrouted', table_name='alert_facts')
    op.drop_index('ix_alert_facts_project_id', table_name='alert_facts')
    op.drop_table('alert_facts')
