"""Cron monitors: the monitors, their check-ins (one row per run) and their
incidents (storage/schema/crons.py says what each column holds).

Revision ID: 0027
Revises: 0029
"""

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0029"
branch_labels = None
depends_on = None

UNPROCESSED = sa.text("processed = 0")
RUNNING = sa.text("status = 'in_progress'")


def upgrade() -> None:
    op.create_table(
        'cron_monitors',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('slug', sa.String(length=64), nullable=False),
        sa.Column('schedule_type', sa.String(length=16), nullable=True),
        sa.Column('schedule', sa.String(length=200), nullable=True),
        sa.Column('unit', sa.String(length=16), nullable=True),
        sa.Column('checkin_margin', sa.Integer(), nullable=False),
        sa.Column('max_runtime', sa.Integer(), nullable=False),
        sa.Column('timezone', sa.String(length=64), nullable=False),
        sa.Column('failure_threshold', sa.Integer(), nullable=False),
        sa.Column('recovery_threshold', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=True),
        sa.Column('next_expected_us', sa.BigInteger(), nullable=True),
        sa.Column('last_checkin_us', sa.BigInteger(), nullable=True),
        sa.Column('failures', sa.Integer(), nullable=False),
        sa.Column('successes', sa.Integer(), nullable=False),
        sa.Column('incident_id', sa.Integer(), nullable=True),
        sa.Column('created_us', sa.BigInteger(), nullable=False),
        sa.Column('updated_us', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('project_id', 'slug', name='uq_cron_monitors_project_slug'))
    op.create_index('ix_cron_monitors_next_expected', 'cron_monitors', ['next_expected_us'],
                    unique=False)
    op.create_table(
        'cron_checkins',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('check_in_id', sa.String(length=32), nullable=False),
        sa.Column('monitor_slug', sa.String(length=64), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('duration_s', sa.Float(), nullable=True),
        sa.Column('environment', sa.String(length=200), nullable=True),
        sa.Column('release', sa.String(length=200), nullable=True),
        sa.Column('trace_id', sa.String(length=32), nullable=True),
        sa.Column('monitor_config', sa.JSON(), nullable=True),
        sa.Column('latest', sa.Integer(), nullable=False),
        sa.Column('ts_us', sa.BigInteger(), nullable=False),
        sa.Column('finished_us', sa.BigInteger(), nullable=True),
        sa.Column('received_us', sa.BigInteger(), nullable=False),
        sa.Column('processed', sa.Integer(), server_default=sa.text('0'), nullable=False),
        sa.Column('expected_us', sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint('project_id', 'check_in_id'))
    op.create_index('ix_cron_checkins_monitor_ts', 'cron_checkins',
                    ['project_id', 'monitor_slug', 'ts_us'], unique=False)
    op.create_index('ix_cron_checkins_project_ts', 'cron_checkins', ['project_id', 'ts_us'],
                    unique=False)
    op.create_index('ix_cron_checkins_unprocessed', 'cron_checkins', ['ts_us'], unique=False,
                    sqlite_where=UNPROCESSED, postgresql_where=UNPROCESSED)
    op.create_index('ix_cron_checkins_running', 'cron_checkins', ['ts_us'], unique=False,
                    sqlite_where=RUNNING, postgresql_where=RUNNING)
    op.create_table(
        'cron_incidents',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('monitor_id', sa.Integer(), nullable=False),
        sa.Column('reason', sa.String(length=16), nullable=False),
        sa.Column('opened_by', sa.String(length=32), nullable=False),
        sa.Column('opened_us', sa.BigInteger(), nullable=False),
        sa.Column('resolved_us', sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(['monitor_id'], ['cron_monitors.id']),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('monitor_id', 'opened_by',
                            name='uq_cron_incidents_monitor_opened_by'))
    op.create_index('ix_cron_incidents_monitor', 'cron_incidents', ['monitor_id', 'opened_us'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_cron_incidents_monitor', table_name='cron_incidents')
    op.drop_table('cron_incidents')
    for name in ('ix_cron_checkins_running', 'ix_cron_checkins_unprocessed',
                 'ix_cron_checkins_project_ts', 'ix_cron_checkins_monitor_ts'):
        op.drop_index(name, table_name='cron_checkins')
    op.drop_table('cron_checkins')
    op.drop_index('ix_cron_monitors_next_expected', table_name='cron_monitors')
    op.drop_table('cron_monitors')
