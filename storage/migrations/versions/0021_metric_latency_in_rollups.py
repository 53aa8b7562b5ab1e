"""The latency histograms of the metric-fed request rollups move into the rollup rows:
one row per (minute or hour, key), its bucket counts in `buckets` (a JSON object of
counts by bucket), instead of a row per bucket in metric_request_latency and
metric_request_latency_hourly, which go (with their index by time). A duration
metric's point carries a dozen buckets or more: their upserts were most of the
writer's cost of a metric point. The rollups of requests and spans keep their rows
per bucket.

Both ways carry the counts over: up, each row's buckets gathered into its JSON
(bucket numbers as text keys); down, the JSON spread back into a row per bucket.

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

KEY = ("project_id", "service", "env", "method", "route")
# (rollups, latency, time column)
TABLES = (
    ("metric_request_rollups", "metric_request_latency", "minute"),
    ("metric_request_rollups_hourly", "metric_request_latency_hourly", "hour"),
)


def _postgres() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    gather = ("COALESCE(jsonb_object_agg(bucket, count)::text, '{}')" if _postgres()
              else "COALESCE(json_group_object(CAST(bucket AS TEXT), count), '{}')")
    for rollups, latency, time in TABLES:
        op.add_column(rollups, sa.Column('buckets', sa.Text(), nullable=False,
                                         server_default='{}'))
        match = " AND ".join(f'l."{c}" = "{rollups}"."{c}"' for c in (*KEY, time))
        op.execute(f'UPDATE "{rollups}" SET buckets = (SELECT {gather} '
                   f'FROM "{latency}" AS l WHERE {match})')
        op.drop_index(f'ix_{latency}_project_{time}', table_name=latency)
        op.drop_table(latency)


def downgrade() -> None:
    spread = ("json_each_text(r.buckets::json) AS b" if _postgres()
              else "json_each(r.buckets) AS b")
    for rollups, latency, time in TABLES:
        op.create_table(
            latency,
            sa.Column('project_id', sa.Integer(), nullable=False),
            sa.Column('service', sa.String(length=200), nullable=False),
            sa.Column('env', sa.String(length=200), nullable=False),
            sa.Column('method', sa.String(length=16), nullable=False),
            sa.Column('route', sa.String(length=500), nullable=False),
            sa.Column(time, sa.BigInteger(), nullable=False),
            sa.Column('bucket', sa.Integer(), nullable=False),
            sa.Column('count', sa.BigInteger(), nullable=False),
            sa.PrimaryKeyConstraint(*KEY, time, 'bucket'))
        op.create_index(f'ix_{latency}_project_{time}', latency, ['project_id', time],
                        unique=False)
        columns = ", ".join(f'"{c}"' for c in (*KEY, time))
        op.execute(f'INSERT INTO "{latency}" ({columns}, bucket, count) '
                   f"SELECT {', '.join(f'r.{c}' for c in (*KEY, time))}, "
                   f"CAST(b.key AS INTEGER), CAST(b.value AS BIGINT) "
                   f'FROM "{rollups}" AS r, {spread}')
        op.drop_column(rollups, 'buckets')
