"""Release health and user feedback (issue 26): `session_rollups` (sessions per
release, environment and start minute: started, exited, errored, crashed, abnormal),
`session_users` (distinct users per release, environment and hour, with whether they
errored or crashed), `session_marks` (what makes each session update count once) and
`feedback` (Sentry's `feedback` and `user_report` items).

Revision ID: 0026
Revises: 0023
"""

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0023"
branch_labels = None
depends_on = None

OUTCOMES = ("started", "exited", "errored", "crashed", "abnormal")


def _key() -> list[sa.Column]:
    return [sa.Column('project_id', sa.Integer(), nullable=False),
            sa.Column('release', sa.String(length=200), nullable=False),
            sa.Column('environment', sa.String(length=200), nullable=False)]


def upgrade() -> None:
    op.create_table(
        'session_rollups',
        *_key(),
        sa.Column('minute', sa.BigInteger(), nullable=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in OUTCOMES),
        sa.PrimaryKeyConstraint('project_id', 'release', 'environment', 'minute'),
    )
    op.create_index('ix_session_rollups_project_minute', 'session_rollups',
                    ['project_id', 'minute'], unique=False)
    op.create_table(
        'session_users',
        *_key(),
        sa.Column('hour', sa.BigInteger(), nullable=False),
        sa.Column('user_key', sa.LargeBinary(length=16), nullable=False),
        sa.Column('errored', sa.Integer(), nullable=False),
        sa.Column('crashed', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('project_id', 'release', 'environment', 'hour', 'user_key'),
    )
    op.create_index('ix_session_users_project_hour', 'session_users',
                    ['project_id', 'hour'], unique=False)
    op.create_table(
        'session_marks',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('mark', sa.LargeBinary(length=16), nullable=False),
        sa.Column('received_us', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('project_id', 'mark'),
    )
    op.create_index('ix_session_marks_project_received', 'session_marks',
                    ['project_id', 'received_us'], unique=False)
    op.create_table(
        'feedback',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('feedback_id', sa.String(length=32), nullable=False),
        sa.Column('associated_event_id', sa.String(length=32), nullable=True),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('name', sa.Text(), nullable=True),
        sa.Column('email', sa.Text(), nullable=True),
        sa.Column('message', sa.Text(), nullable=False),
        sa.Column('url', sa.Text(), nullable=True),
        sa.Column('release', sa.String(length=200), nullable=True),
        sa.Column('environment', sa.String(length=200), nullable=True),
        sa.Column('ts_us', sa.BigInteger(), nullable=False),
        sa.Column('received_us', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('project_id', 'feedback_id', name='uq_feedback_project_feedback_id'),
    )
    op.create_index('ix_feedback_project_event', 'feedback',
                    ['project_id', 'associated_event_id'], unique=False)
    op.create_index('ix_feedback_project_ts', 'feedback', ['project_id', 'ts_us'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_feedback_project_ts', table_name='feedback')
    op.drop_index('ix_feedback_project_event', table_name='feedback')
    op.drop_table('feedback')
    op.drop_index('ix_session_marks_project_received', table_name='session_marks')
    op.drop_table('session_marks')
    op.drop_index('ix_session_users_project_hour', table_name='session_users')
    op.drop_table('session_users')
    op.drop_index('ix_session_rollups_project_minute', table_name='session_rollups')
    op.drop_table('session_rollups')
