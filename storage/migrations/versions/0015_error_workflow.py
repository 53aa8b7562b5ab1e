"""Who changed an error group's status: `error_status_changes.actor`, the dashboard
login that made a change by hand. Changes the collector makes (a recurrence) and
those recorded before this revision have none (NULL).

`error_groups.resolved_release`: a group resolved "in the next release" names the
release current at that time; only an error of a release the group had not seen by
then reopens it (storage/writer/groups.py). NULL: resolved plainly.

An Ignored group may be snoozed: until a time (`snooze_until_us`), until its count
reaches `snooze_count`, or until an hour counts more than `snooze_per_hour` errors;
then the writer opens it again. NULL: no such condition.

And the `user` facet of the stored errors (the error list's users affected, counted
by storage/writer/facets.py from now on), backfilled from the errors already stored:
one grouped read of error_events. Values cut at 200 characters, as the writer does.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

SNOOZE = ("snooze_until_us", "snooze_count", "snooze_per_hour")


def upgrade() -> None:
    op.add_column('error_groups', sa.Column('resolved_release', sa.Text(), nullable=True))
    for name in SNOOZE:
        op.add_column('error_groups', sa.Column(name, sa.BigInteger(), nullable=True))
    op.add_column('error_status_changes', sa.Column('actor', sa.String(length=200),
                                                    nullable=True))
    op.execute(
        "INSERT INTO error_group_facets (project_id, fingerprint, facet, value, count, "
        "first_seen_us, last_seen_us) "
        "SELECT project_id, fingerprint, 'user', substr(user_id, 1, 200), count(*), "
        "min(ts_us), max(ts_us) FROM error_events "
        "WHERE user_id IS NOT NULL AND user_id <> '' "
        "GROUP BY project_id, fingerprint, substr(user_id, 1, 200)")


def downgrade() -> None:
    op.execute("DELETE FROM error_group_facets WHERE facet = 'user'")
    with op.batch_alter_table('error_groups') as batch:
        for name in reversed(SNOOZE):
            batch.drop_column(name)
        batch.drop_column('resolved_release')
    # A batch: SQLite drops columns by copying the table (PostgreSQL alters it).
    with op.batch_alter_table('error_status_changes') as batch:
        batch.drop_column('actor')
