"""Errors carry tags, a level, the exception chain as data and the sender's context;
each error group counts the values of its facets (environment, release, service,
level and each tag) in `error_group_facets`, so that the error list filters by them
and a group shows its distribution without reading its events.

Existing rows keep NULL in every new column, and their groups start with no facet
rows: only errors stored from now on are counted.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

COLUMNS = ("tags", "level", "exceptions", "context")


def upgrade() -> None:
    op.add_column('error_events', sa.Column('tags', sa.JSON(), nullable=True))
    op.add_column('error_events', sa.Column('level', sa.String(length=16), nullable=True))
    op.add_column('error_events', sa.Column('exceptions', sa.JSON(), nullable=True))
    op.add_column('error_events', sa.Column('context', sa.JSON(), nullable=True))
    op.create_table('error_group_facets',
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('fingerprint', sa.String(length=255), nullable=False),
    sa.Column('facet', sa.String(length=200), nullable=False),
    sa.Column('value', sa.String(length=200), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('first_seen_us', sa.BigInteger(), nullable=False),
    sa.Column('last_seen_us', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'fingerprint', 'facet', 'value')
    )
    op.create_index('ix_error_group_facets_project_facet_value', 'error_group_facets',
                    ['project_id', 'facet', 'value'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_error_group_facets_project_facet_value',
                  table_name='error_group_facets')
    op.drop_table('error_group_facets')
    # A batch: SQLite drops columns by copying the table (PostgreSQL alters it). The
    # partial unique index of 0007 is made again by hand: a copy could lose its WHERE.
    op.drop_index('uq_error_events_occurrence', table_name='error_events')
    with op.batch_alter_table('error_events') as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
    keyed = sa.text('occurrence_key IS NOT NULL')
    op.create_index('uq_error_events_occurrence', 'error_events',
                    ['project_id', 'occurrence_key'], unique=True,
                    sqlite_where=keyed, postgresql_where=keyed)
