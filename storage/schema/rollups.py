"""Request metrics rolled up per minute and per hour, from requests and spans and,
apart, from HTTP server duration metrics."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Column, Float, Index, Integer, Table, Text

from storage import rows
from storage.schema.columns import form_columns, metadata

# Request metrics, rolled up per minute and per (service, env, method, route): the
# key (storage/rows.py) is both tables' primary key.
ROLLUP_KEY = rows.ROLLUP_KEY.column_names


def _rollup_key_columns() -> list[Column[Any]]:
    return form_columns(rows.ROLLUP_KEY, primary_key=ROLLUP_KEY)


request_rollups = Table(
    rows.REQUEST_ROLLUPS,
    metadata,
    *_rollup_key_columns(),
    Column("count", BigInteger, nullable=False),
    Column("error_count", BigInteger, nullable=False),
    Column("duration_sum_ms", Float, nullable=False),
    Index("ix_request_rollups_project_minute", "project_id", "minute"),
)

# The latency histogram of each rollup row: one row per non-empty bucket
# (model/histogram.py), so that merging is an atomic `count = count + n`.
request_latency = Table(
    rows.REQUEST_LATENCY,
    metadata,
    *_rollup_key_columns(),
    Column("bucket", Integer, primary_key=True),
    Column("count", BigInteger, nullable=False),
    # The primary key leads with the service and route: a range of minutes of every
    # route would read the whole table without this (migration 0014).
    Index("ix_request_latency_project_minute", "project_id", "minute"),
)

# The same rollups fed by HTTP server duration metrics (storage/writer/points.py),
# apart from those of requests and spans: per service, the performance queries take
# one source or the other, never both (storage/queries/performance.py). Each row
# holds its latency histogram, `buckets`: a JSON object of counts by bucket, merged
# by the upsert (storage/writer/rollups.py). A duration metric's point carries a
# dozen buckets or more, and a row per bucket was most of the writer's cost of a
# metric point (migration 0021).
def _buckets_column() -> Column[Any]:
    return Column("buckets", Text, nullable=False, server_default="{}")


metric_request_rollups = Table(
    rows.METRIC_REQUEST_ROLLUPS,
    metadata,
    *_rollup_key_columns(),
    Column("count", BigInteger, nullable=False),
    Column("error_count", BigInteger, nullable=False),
    Column("duration_sum_ms", Float, nullable=False),
    _buckets_column(),
    Index("ix_metric_request_rollups_project_minute", "project_id", "minute"),
)

# The tables above per hour, with coarse latency buckets (model/histogram.py: five
# fine buckets each, quantiles within 5%): a week is 168 rows per route instead of
# 10,080, for the performance page's long ranges (storage/queries/performance.py).
# Written in the same transaction as the per-minute rows (storage/writer/hourly.py).
HOURLY_KEY = rows.HOURLY_KEY.column_names


def _hourly_rollups(name: str, *buckets: Column[Any]) -> Table:
    return Table(name, metadata,
                 *form_columns(rows.HOURLY_KEY, primary_key=HOURLY_KEY),
                 Column("count", BigInteger, nullable=False),
                 Column("error_count", BigInteger, nullable=False),
                 Column("duration_sum_ms", Float, nullable=False),
                 *buckets,
                 Index(f"ix_{name}_project_hour", "project_id", "hour"))


request_rollups_hourly = _hourly_rollups(rows.REQUEST_ROLLUPS_HOURLY)
request_latency_hourly = Table(
    rows.REQUEST_LATENCY_HOURLY, metadata,
    *form_columns(rows.HOURLY_KEY, primary_key=HOURLY_KEY),
    Column("bucket", Integer, primary_key=True),  # a coarse bucket
    Column("count", BigInteger, nullable=False),
    Index(f"ix_{rows.REQUEST_LATENCY_HOURLY}_project_hour", "project_id", "hour"))
metric_request_rollups_hourly = _hourly_rollups(rows.METRIC_REQUEST_ROLLUPS_HOURLY,
                                                _buckets_column())

# Operations and the service map's edges (storage/rows.py, storage/writer/operations.py):
# per minute, and per hour with coarse buckets, their latency buckets in the row.
OPERATION_KEY = rows.OPERATION_KEY.column_names
EDGE_KEY = rows.EDGE_KEY.column_names


def _keyed_rollups(name: str, form: rows.RowForm, time: str) -> Table:
    return Table(name, metadata,
                 *form_columns(form, primary_key=form.column_names),
                 Column("count", BigInteger, nullable=False),
                 Column("error_count", BigInteger, nullable=False),
                 Column("duration_sum_ms", Float, nullable=False),
                 _buckets_column(),
                 Index(f"ix_{name}_project_{time}", "project_id", time))


operation_rollups = _keyed_rollups(rows.OPERATION_ROLLUPS, rows.OPERATION_KEY, "minute")
operation_rollups_hourly = _keyed_rollups(rows.OPERATION_ROLLUPS_HOURLY,
                                          rows.OPERATION_HOURLY_KEY, "hour")
edge_rollups = _keyed_rollups(rows.EDGE_ROLLUPS, rows.EDGE_KEY, "minute")
edge_rollups_hourly = _keyed_rollups(rows.EDGE_ROLLUPS_HOURLY, rows.EDGE_HOURLY_KEY, "hour")
# Which service each caller's peer turned out to be (storage/writer/peers.py).
peer_aliases = Table(
    rows.PEER_ALIASES, metadata,
    *form_columns(rows.PEER_ALIAS, primary_key=rows.PEER_ALIAS.column_names[:4]))
