"""The tables of the signals other than errors: spans, log records, metric series and
points, and deploys. The three big ones are partitioned by day on PostgreSQL
(`by_day`, storage/schema/columns.py)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, LargeBinary, Table, Text, text

from storage import rows
from storage.schema.columns import by_day, form_columns, metadata

# One narrow row per span (storage/rows.py). A rowid table: rows append, and only
# its indexes are written at random places.
spans = Table(
    rows.SPANS.table,
    metadata,
    *form_columns(rows.SPANS, primary_key=("project_id", "trace_id", "span_id")),
    Index("ix_spans_project_start", "project_id", "start_ns"),
    # The failed spans alone (status ERROR, a few in a hundred): a search for them
    # walks these instead of every span of the range (storage/queries/trace_search.py).
    Index("ix_spans_project_errors", "project_id", "start_ns",
          sqlite_where=text("status_code = 2"), postgresql_where=text("status_code = 2")),
    **by_day("start_ns", ("project_id", "trace_id", "span_id", "start_ns")),
)

# One narrow row per log record (storage/rows.py, storage/logbody.py), keyed by a
# hash of the record so that a retried request adds no row.
logs = Table(
    rows.LOGS.table,
    metadata,
    *form_columns(rows.LOGS, primary_key=("project_id", "record_key")),
    Index("ix_logs_project_time", "project_id", "time_ns"),
    Index("ix_logs_project_trace", "project_id", "trace_id"),
    Index("ix_logs_project_service_time", "project_id", "service_name", "time_ns"),
    **by_day("time_ns", ("project_id", "record_key", "time_ns")),
)

deploys = Table(
    rows.DEPLOYS.table,
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *form_columns(rows.DEPLOYS),
    Index("ix_deploys_project_ts", "project_id", "ts_us"),
)

# Metric series, once per project (storage/rows.py says what each column holds).
metric_series = Table(
    rows.METRIC_SERIES.table,
    metadata,
    *form_columns(rows.METRIC_SERIES, primary_key=("project_id", "series_key")),
    Index("ix_metric_series_project_name", "project_id", "name"),
)

# Metric points: cumulative monotonic sums and histograms are stored as deltas
# (storage/writer/points.py); a re-sent point is stored once (the primary key).
metric_points = Table(
    rows.METRIC_POINTS.table,
    metadata,
    *form_columns(rows.METRIC_POINTS, primary_key=("project_id", "series_key", "time_ns")),
    Index("ix_metric_points_project_time", "project_id", "time_ns"),
    **by_day("time_ns", ("project_id", "series_key", "time_ns")),
)

# A few exemplars per metric series and minute (storage/rows.py: the slot in the key
# is the bound). By trace for a trace's metrics, by minute for retention.
metric_exemplars = Table(
    rows.METRIC_EXEMPLARS.table,
    metadata,
    *form_columns(rows.METRIC_EXEMPLARS,
                  primary_key=("project_id", "series_key", "minute", "slot")),
    Index("ix_metric_exemplars_project_trace", "project_id", "trace_id"),
    Index("ix_metric_exemplars_project_minute", "project_id", "minute"),
)

# The last cumulative point of each series converted to deltas, so that a restarted
# collector, or another one behind the same load balancer, goes on from it.
# `time_ns` is -1 in a row made only to be locked (no point seen yet). `state` is
# the cumulative values as JSON: {"value"} for a sum, {"count", "sum", "buckets"} for
# a histogram.
metric_cumulative = Table(
    rows.METRIC_CUMULATIVE,
    metadata,
    Column("project_id", Integer, primary_key=True),
    Column("series_key", LargeBinary(16), primary_key=True),
    Column("start_ns", BigInteger, nullable=False),
    Column("time_ns", BigInteger, nullable=False),
    Column("state", Text, nullable=False),
)
