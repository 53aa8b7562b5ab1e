"""Row forms: each table's rows, and each row of the wire form, declared once, by name.

A row travels as a plain tuple (cheap to build, pickle and bind), so the order of
its values matters; this module is the one place that order is written. Everyone
else goes by name:
- storage/schema/ (columns.py) builds the columns of the tables the writer fills from these
  fields (names, kinds, lengths, nullability, in this order), and takes the other
  tables' names and the shared fingerprint column from here;
- storage/wire/batch.py builds rows with `RowForm.row(name=value, ...)`;
- storage/wire/storable.py derives the positions of its checks from the kinds;
- storage/writer/commit.py and storage/writer/groups.py name their insert columns from
  the forms and read wire rows with `RowForm.getter("name", ...)`.

No SQLAlchemy and no record types here: the writer process imports this module
and stays small (importing SQLAlchemy alone would double its memory).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

# The kinds of value a field holds: what the schema maps to a column type and what
# storage/wire/storable.py checks.
INT32 = "int32"  # INTEGER
INT64 = "int64"  # BIGINT
FLOAT = "float"  # a finite double
TEXT = "text"  # TEXT, or VARCHAR(length)
JSON = "json"  # JSON, carried as its text (storage/jsontext.py)
BYTES = "bytes"  # BLOB / BYTEA
HOURLY = "hourly"  # {epoch hour: count}, wire only (checked by storage/wire/batch.py)

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    kind: str
    length: int | None = None  # VARCHAR(length) for text, the size hint for bytes
    nullable: bool = False


def _builder(names: tuple[str, ...], cls: type[tuple[Any, ...]] = tuple
              ) -> Callable[..., Any]:
    """A function taking every field by keyword and returning the tuple (of `cls`) in
    order: a misspelt or forgotten field is a TypeError, not a value in the wrong
    column. Generated (as collections.namedtuple generates its __new__) because a
    plain function call costs about a tenth of a microsecond per row, and a
    dictionary or a named tuple on the wire several times that, to build and to
    unpickle."""
    if not all(name.isidentifier() and not name.startswith("_") for name in names):
        raise ValueError(f"field names must be identifiers: {names}")
    joined = ", ".join(names)
    body = f"({joined},)" if cls is tuple else f"_new(_cls, ({joined},))"
    built: Callable[..., Any] = eval(f"lambda *, {joined}: {body}",
                                     {"_new": tuple.__new__, "_cls": cls})
    return built


@dataclass(frozen=True)
class RowForm:
    """A row of `table` as a tuple. `columns` are every column the writer fills, in
    the table's order; `supplied` names those the writer adds itself at commit time
    (the project, the time received), which are not on the wire. `fields` are the
    rest, in order: the wire row that storage/wire/batch.py builds."""

    table: str
    columns: tuple[Field, ...]
    supplied: tuple[str, ...] = ()
    fields: tuple[Field, ...] = field(init=False)
    names: tuple[str, ...] = field(init=False)  # of `fields`
    row: Callable[..., Row] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fields = tuple(f for f in self.columns if f.name not in self.supplied)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "names", tuple(f.name for f in fields))
        object.__setattr__(self, "row", _builder(self.names))

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.columns)

    def column(self, name: str) -> Field:
        (found,) = [f for f in self.columns if f.name == name]
        return found

    def position(self, name: str) -> int:
        """Where `name` sits in the wire row."""
        return self.names.index(name)

    def getter(self, *names: str) -> Callable[[Row], Any]:
        """Reads the named values of a wire row (a tuple of them for several), in C."""
        return itemgetter(*(self.position(name) for name in names))


def _form(table: str, *columns: Field, supplied: tuple[str, ...] = ()) -> RowForm:
    return RowForm(table, columns, supplied)


PROJECT_ID = Field("project_id", INT32)
FINGERPRINT = Field("fingerprint", TEXT, 255)
# Added by the writer to every row it inserts: the project from the batch, the
# receiving time from its commit.
BY_WRITER = ("project_id", "received_us")

# --- tables the writer inserts rows into --------------------------------------------

# A resource (service.name and the rest) is shared by every span of a process:
# stored once per project, keyed by a hash (storage/spanbody.py).
RESOURCES = _form(
    "resources",
    Field("id", INT64),
    PROJECT_ID,
    Field("attributes", JSON),
    supplied=BY_WRITER,
)

# One narrow row per span: ids as bytes, the searched fields as columns, and the
# rest (attributes, events, links) in `body`, an OTLP Span message
# (storage/spanbody.py).
SPANS = _form(
    "spans",
    PROJECT_ID,
    Field("trace_id", BYTES, 16),
    Field("span_id", BYTES, 8),
    Field("parent_span_id", BYTES, 8),  # empty for a root span
    Field("name", TEXT),
    Field("kind", INT32),
    Field("start_ns", INT64),
    Field("end_ns", INT64),
    Field("status_code", INT32),
    Field("status_message", TEXT),
    Field("service_name", TEXT),
    Field("scope_name", TEXT),
    Field("category", TEXT, 16),
    Field("resource_id", INT64),
    Field("body", BYTES),
    supplied=BY_WRITER,
)

# One narrow row per OTLP log record, keyed by a hash of what it is
# (storage/logbody.py's record_key) so that a retried request adds no row. The
# searched fields are columns; the whole record is `body`, an OTLP LogRecord
# message (the body's value type, dropped_attributes_count and the rest).
LOGS = _form(
    "logs",
    PROJECT_ID,
    Field("record_key", BYTES, 16),
    Field("time_ns", INT64),  # its time, or its observed time when the time is unset
    Field("observed_ns", INT64),
    Field("severity_number", INT32),  # 0 (unspecified) to 24 (FATAL4)
    Field("severity_text", TEXT),
    Field("trace_id", BYTES, 16),  # empty when the record is in no trace
    Field("span_id", BYTES, 8),  # empty when none
    Field("flags", INT64),
    Field("event_name", TEXT),
    Field("service_name", TEXT),
    Field("scope_name", TEXT),
    Field("resource_id", INT64),
    Field("body_text", TEXT),  # the body as text, for search: a string as is, else JSON
    # The whole record (storage/logbody.py), its attributes searched in it by key=value.
    Field("body", BYTES),
    Field("received_us", INT64),
    supplied=BY_WRITER,
)

ERROR_EVENTS = _form(
    "error_events",
    PROJECT_ID,
    FINGERPRINT,
    Field("ts_us", INT64),
    Field("received_us", INT64),
    Field("exception_class", TEXT),
    Field("message", TEXT),
    Field("backtrace", JSON),
    Field("params", JSON, nullable=True),
    Field("source_context", JSON, nullable=True),
    Field("request_id", TEXT, nullable=True),
    Field("user_id", TEXT, nullable=True),
    Field("trace_id", TEXT, 32, nullable=True),
    Field("span_id", TEXT, 16, nullable=True),
    # Added by migration 0007 (model/records.py's ErrorEvent says what each holds).
    Field("service", TEXT, nullable=True),
    Field("environment", TEXT, nullable=True),
    Field("release", TEXT, nullable=True),
    Field("log_time_ns", INT64, nullable=True),
    # Unique per project where set (storage/schema/errors.py): the writer inserts a keyed
    # error only if no copy of it is stored (storage/writer/occurrences.py).
    Field("occurrence_key", TEXT, 32, nullable=True),
    # Added by migration 0009 (model/records.py's ErrorEvent says what each holds).
    Field("tags", JSON, nullable=True),  # {key: value}, strings
    Field("level", TEXT, 16, nullable=True),
    Field("exceptions", JSON, nullable=True),
    Field("context", JSON, nullable=True),
    supplied=BY_WRITER,
)

DEPLOYS = _form(
    "deploys",
    PROJECT_ID,
    Field("git_sha", TEXT, 128),
    Field("version", TEXT, nullable=True),
    Field("env", TEXT, 200, nullable=True),
    Field("deployer", TEXT, nullable=True),
    Field("description", TEXT, nullable=True),
    Field("ts_us", INT64),
    Field("received_us", INT64),
    # Last: added by migration 0017, where PostgreSQL appends it.
    Field("service", TEXT, 200, nullable=True),
    supplied=BY_WRITER,
)

# User feedback (Sentry's `feedback` and `user_report` items; model.records.Feedback),
# unique per project by `feedback_id`: a retried envelope stores it once. Linked to
# its error by `associated_event_id`, the event's occurrence key, when read
# (storage/queries/feedback.py): it may come before its event.
FEEDBACK = _form(
    "feedback",
    PROJECT_ID,
    Field("feedback_id", TEXT, 32),
    Field("associated_event_id", TEXT, 32, nullable=True),
    Field("source", TEXT, 16),  # "feedback" or "user_report"
    Field("name", TEXT, nullable=True),
    Field("email", TEXT, nullable=True),
    Field("message", TEXT),
    Field("url", TEXT, nullable=True),
    Field("release", TEXT, 200, nullable=True),
    Field("environment", TEXT, 200, nullable=True),
    Field("ts_us", INT64),
    Field("received_us", INT64),
    supplied=BY_WRITER,
)

# Cron monitor check-ins (model/records.py's CheckIn), one row per run keyed by
# (project, check_in_id): a run's later check-in (ok or error after in_progress)
# updates its row (storage/writer/checkins.py). `finished_us` is when a run ended
# (None while in progress). The cron checker (storage/crons/checker.py) adds the
# missed and timed-out ones and the columns outside this form (processed,
# expected_us).
CHECK_INS = _form(
    "cron_checkins",
    PROJECT_ID,
    Field("check_in_id", TEXT, 32),
    Field("monitor_slug", TEXT, 64),
    Field("status", TEXT, 16),  # model.cron.STATES
    Field("duration_s", FLOAT, nullable=True),
    Field("environment", TEXT, 200, nullable=True),
    Field("release", TEXT, 200, nullable=True),
    Field("trace_id", TEXT, 32, nullable=True),
    Field("monitor_config", JSON, nullable=True),  # model.cron.MonitorConfig.as_dict()
    Field("latest", INT32),  # 1: finishes the monitor's latest run in progress
    Field("ts_us", INT64),  # when it arrived (a run's first check-in)
    Field("finished_us", INT64, nullable=True),
    Field("received_us", INT64),
    supplied=BY_WRITER,
)

# Metrics (written by storage/writer/points.py). A series is one metric name, kind
# and unit of one resource, scope and attribute set, stored once; its points
# reference it by `series_key` (the first 16 bytes of blake2b over name, kind, unit,
# resource id, scope and the attributes' JSON: storage/wire/points.py).
METRIC_SERIES = _form(
    "metric_series",
    PROJECT_ID,
    Field("series_key", BYTES, 16),
    Field("name", TEXT),
    Field("kind", TEXT, 32),  # model.records.METRIC_KINDS
    Field("unit", TEXT),
    Field("description", TEXT),
    Field("temporality", INT32),  # as sent: 0 unspecified, 1 delta, 2 cumulative
    Field("monotonic", INT32),  # 1 for a monotonic sum
    # How to read the stored points over time: "delta" (each point is what happened
    # in (start_ns, time_ns]: add them up) or "value" (each point is a value at
    # time_ns: gauges, non-monotonic cumulative sums, summaries).
    Field("points", TEXT, 8),
    Field("service_name", TEXT),
    Field("scope_name", TEXT),
    Field("resource_id", INT64),
    Field("attributes", JSON),
    Field("received_us", INT64),  # the first time the series was written
    supplied=BY_WRITER,
)

# One row per stored point, keyed by (project, series, time): a re-sent point is
# stored once. Values by kind: gauge and sum in `value`; histograms in `count`,
# `sum`, `min`, `max` and `buckets`; summaries in `count`, `sum` and `buckets`.
METRIC_POINTS = _form(
    "metric_points",
    PROJECT_ID,
    Field("series_key", BYTES, 16),
    Field("time_ns", INT64),
    Field("start_ns", INT64),  # 0 when unset
    Field("value", FLOAT, nullable=True),
    Field("count", INT64),
    Field("sum", FLOAT, nullable=True),
    Field("min", FLOAT, nullable=True),
    Field("max", FLOAT, nullable=True),
    # Histogram: {"bounds": [...], "counts": [...]}; exponential: {"scale", "zero_count",
    # "zero_threshold", "positive": {"offset", "counts"}, "negative": {...}}; summary:
    # {"quantiles": [[q, v], ...]}. None for gauges and sums.
    Field("buckets", JSON, nullable=True),
    Field("flags", INT32),
    Field("received_us", INT64),
    supplied=BY_WRITER,
)

# A few exemplars of each metric series per minute (OTLP exemplars; a Sentry
# trace_metric's trace): the link from a metric to the trace of a call it measured.
# At most MAX_EXEMPLARS a series a minute, by the primary key: an exemplar takes the
# slot its trace id chooses (storage/wire/points.py), so the bound holds
# across commits and collectors without a read, and a re-sent exemplar is stored once.
MAX_EXEMPLARS = 4
METRIC_EXEMPLARS = _form(
    "metric_exemplars",
    PROJECT_ID,
    Field("series_key", BYTES, 16),
    Field("minute", INT64),  # epoch seconds of the minute of `time_ns`
    Field("slot", INT32),  # 0 to MAX_EXEMPLARS - 1
    Field("time_ns", INT64),  # the exemplar's time, else its point's
    Field("value", FLOAT, nullable=True),  # None: not finite
    Field("trace_id", BYTES, 16),
    Field("span_id", BYTES, 8),  # empty when the exemplar names no span
    supplied=("project_id",),
)

# --- tables the writer upserts aggregates into (storage/writer/groups.py) ---------

# Per error group, how many of its stored errors had each value of each facet
# (storage/writer/facets.py): the fields below, then each tag by its key (a tag named
# like a field is overridden by the field). Values longer than FACET_LENGTH are
# counted under their first FACET_LENGTH characters, which is what filters compare.
ERROR_GROUP_FACETS = "error_group_facets"
FIELD_FACETS = ("environment", "release", "service", "level")
# The facet of an error's user id: a group's distinct values are its users affected.
USER_FACET = "user"
FACET_LENGTH = 200
FACET_KEY = _form(
    "facet key",
    PROJECT_ID,
    FINGERPRINT,
    Field("facet", TEXT, FACET_LENGTH),
    Field("value", TEXT, FACET_LENGTH),
)

ERROR_GROUPS = "error_groups"
# What kind of issue a group is (error_groups.issue_type): `error` (errors, grouped by
# model/fingerprint.py) or `performance` (a problem the detectors found in traces:
# model/detectors.py, storage/writer/detect.py). Here for the writer, which imports no
# schema.
ISSUE_TYPES = ("error", "performance")
ERROR_GROUP_HOURLY = "error_group_hourly"
ERROR_STATUS_CHANGES = "error_status_changes"
REQUEST_ROLLUPS = "request_rollups"
REQUEST_LATENCY = "request_latency"
# The same rollups from HTTP server duration metrics, kept apart so that the
# performance queries take, per service, either these or the others, never both
# (storage/queries/performance.py).
# Their rows hold their latency buckets (storage/writer/rollups.py).
METRIC_REQUEST_ROLLUPS = "metric_request_rollups"
# The last cumulative point of each series the writer turns into deltas.
METRIC_CUMULATIVE = "metric_cumulative"
# Alert facts (storage/alerts/outbox.py): the writer records new groups and regressions in
# the commit that makes them (storage/writer/alert_facts.py). A fact's dedupe key is
# unique per project and at most DEDUPE_KEY_LENGTH characters (longer keys are
# shortened by storage/writer/alert_facts.py (dedupe_key)).
ALERT_FACTS = "alert_facts"
DEDUPE_KEY_LENGTH = 200

# Release health (storage/writer/sessions.py, docs/release-health.md): sessions per
# (release, environment, minute they started), their users per hour, and the marks
# of the session counts already added (model.records.SessionCount).
SESSION_ROLLUPS = "session_rollups"
SESSION_USERS = "session_users"
SESSION_MARKS = "session_marks"
SESSION_OUTCOMES = ("started", "exited", "errored", "crashed", "abnormal")
SESSION_KEY = _form(
    "session key",
    PROJECT_ID,
    Field("release", TEXT, 200),
    Field("environment", TEXT, 200),  # "" when none
    Field("minute", INT64),  # epoch seconds of the minute the sessions started in
)

# The key of a request-metric rollup row: per minute and per (service, env, method,
# route). Both rollup tables start with it.
ROLLUP_KEY = _form(
    "rollup key",
    PROJECT_ID,
    Field("service", TEXT, 200),
    Field("env", TEXT, 200),
    Field("method", TEXT, 16),
    Field("route", TEXT, 500),
    Field("minute", INT64),  # epoch seconds of the minute's start
)

# The same rollups per hour, with coarse latency buckets (model/histogram.py), for
# long ranges (storage/writer/hourly.py, storage/queries/performance.py).
REQUEST_ROLLUPS_HOURLY = "request_rollups_hourly"
REQUEST_LATENCY_HOURLY = "request_latency_hourly"
METRIC_REQUEST_ROLLUPS_HOURLY = "metric_request_rollups_hourly"
HOURLY_KEY = _form(
    "hourly rollup key",
    *ROLLUP_KEY.columns[:-1],
    Field("hour", INT64),  # epoch seconds of the hour's start
)

# Operations and the edges of the service map, per minute and per hour
# (storage/writer/operations.py, storage/queries/operations.py, docs/operations.md),
# their latency histograms in the row (`buckets`, storage/writer/rollups.py). An
# operation is what a service does: a non-HTTP server span by name, a consumer, a
# client call by peer and operation, a database operation by its normalised
# statement (model/operations.py). HTTP server spans are in the request rollups.
OPERATION_ROLLUPS = "operation_rollups"
OPERATION_ROLLUPS_HOURLY = "operation_rollups_hourly"
OPERATION_KEY = _form(
    "operation key",
    PROJECT_ID,
    Field("service", TEXT, 200),
    Field("env", TEXT, 200),
    Field("kind", TEXT, 16),  # model/operations.py's KINDS
    Field("peer", TEXT, 500),  # "" for server and consumer operations without one
    Field("operation", TEXT, 1000),
    Field("minute", INT64),
)
OPERATION_HOURLY_KEY = _form("operation hourly key", *OPERATION_KEY.columns[:-1],
                             Field("hour", INT64))
# An edge: calls from `service` to a peer, counted from the caller's client, producer
# and database spans. `peer_type` and `peer` are the peer as the span names it
# (model/operations.py); `peer_aliases` says which service a peer turned out to be.
EDGE_ROLLUPS = "edge_rollups"
EDGE_ROLLUPS_HOURLY = "edge_rollups_hourly"
EDGE_KEY = _form(
    "edge key",
    PROJECT_ID,
    Field("service", TEXT, 200),
    Field("env", TEXT, 200),
    Field("peer_type", TEXT, 16),
    Field("peer", TEXT, 500),
    Field("minute", INT64),
)
EDGE_HOURLY_KEY = _form("edge hourly key", *EDGE_KEY.columns[:-1], Field("hour", INT64))
# Which service a caller's peer is: learned when a client or producer span and its
# child server or consumer span of another service reach the writer
# (storage/writer/peers.py), read by the service map.
PEER_ALIASES = "peer_aliases"
PEER_ALIAS = _form(
    "peer_aliases",
    *(EDGE_KEY.column(name) for name in ("project_id", "service", "peer_type", "peer")),
    Field("callee", TEXT, 200),
    Field("seen_us", INT64),
)

# --- rows that are on the wire only, aggregated by the writer ---------------------

REQUESTS = _form(
    "requests",
    *(ROLLUP_KEY.column(name) for name in ("service", "env", "method", "route")),
    Field("ts_us", INT64),
    Field("status", INT64),
    Field("duration_ms", FLOAT),
)

# A metric point as the writer takes it: the stored row's values (METRIC_POINTS),
# whether the writer converts it from cumulative to delta, and, for HTTP server
# duration metrics, what the request rollups need (`to_ms` 0 for any other metric).
METRIC_WIRE = _form(
    "metrics",
    *(f for f in METRIC_POINTS.columns if f.name not in BY_WRITER),
    Field("cumulative", INT32),  # 1: a cumulative monotonic sum or a histogram
    Field("kind", TEXT, 32),
    *(ROLLUP_KEY.column(name) for name in ("service", "env", "method", "route")),
    Field("status", INT64),
    Field("to_ms", FLOAT),  # milliseconds per unit of the values; 0: not a request metric
)

# What one session update or bucket adds, once (model.records.SessionCount): the
# writer adds it only when its mark is new to the project. `user_key` is 16 bytes of
# BLAKE2b of the distinct id (empty when none): the users are counted, never shown.
SESSIONS = _form(
    "sessions",
    Field("mark", BYTES, 16),
    *(SESSION_KEY.column(name) for name in ("release", "environment", "minute")),
    Field("user_key", BYTES, 16),
    *(Field(name, INT64) for name in SESSION_OUTCOMES),
)

# A batch's operation and edge rollups, folded by the operations processor
# (processors/operations.py): the key without the project, then the counts and the
# latency buckets as a JSON object of counts by bucket.
_COUNTS = (Field("count", INT64), Field("error_count", INT64),
           Field("duration_sum_ms", FLOAT), Field("buckets", TEXT))
OPERATIONS = _form("operations", *OPERATION_KEY.columns[1:], *_COUNTS)
EDGES = _form("edges", *EDGE_KEY.columns[1:], *_COUNTS)
# One half of a call for the writer to pair (storage/writer/peers.py): a client or
# producer span (role CALLER: its own id, its service and peer) or a server or
# consumer span (role CALLEE: its parent's id and its service).
CALLER, CALLEE = 1, 2
LINKS = _form(
    "links",
    Field("trace_id", TEXT, 32),
    Field("span_id", TEXT, 16),
    Field("role", INT32),
    Field("service", TEXT, 200),
    Field("peer_type", TEXT, 16),
    Field("peer", TEXT, 500),
)

# What the performance detectors read of a span (model/detectors.py's Fact), gathered
# by the writer per trace until the trace is complete (storage/writer/detect.py).
TRACE_FACTS = _form(
    "trace_facts",
    Field("trace_id", TEXT, 32),
    Field("span_id", TEXT, 16),
    Field("parent_span_id", TEXT, 16),
    Field("role", INT32),
    Field("service", TEXT, 200),
    Field("name", TEXT, 1000),
    Field("start_ns", INT64),
    Field("end_ns", INT64),
    Field("release", TEXT, 200),
    Field("environment", TEXT, 200),
)
# The project's detector settings (model/detectors.py's DetectorSettings.as_row, as
# JSON), one row with a batch that has facts: the writer runs a trace's detectors with
# the settings of its project's latest batch.
DETECTORS = _form("detectors", Field("settings", JSON))

# One error group's delta from one batch (model.records.GroupDelta).
GROUPS = _form(
    "groups",
    FINGERPRINT,
    Field("exception_class", TEXT),
    Field("message", TEXT),
    Field("count", INT64),
    Field("first_seen_us", INT64),
    Field("last_seen_us", INT64),
    Field("hourly", HOURLY),
)

# A group that may reopen: its latest occurrence in the batch.
REOPEN = _form("reopen", FINGERPRINT, Field("ts_us", INT64))


class WireBatch(NamedTuple):
    """One batch as the writer takes it: each list holds rows of the form named
    beside it. A named tuple: one per batch costs nothing next to its rows, and
    pickles to the same plain values."""

    project_id: int
    spans: list[Row]  # SPANS
    errors: list[Row]  # ERROR_EVENTS
    deploys: list[Row]  # DEPLOYS
    requests: list[Row]  # REQUESTS
    groups: list[Row]  # GROUPS
    reopen: list[Row]  # REOPEN
    resources: list[Row]  # RESOURCES
    logs: list[Row]  # LOGS
    metric_series: list[Row]  # METRIC_SERIES
    metrics: list[Row]  # METRIC_WIRE
    metric_exemplars: list[Row]  # METRIC_EXEMPLARS
    sessions: list[Row]  # SESSIONS
    feedback: list[Row]  # FEEDBACK
    check_ins: list[Row]  # CHECK_INS
    operations: list[Row]  # OPERATIONS
    edges: list[Row]  # EDGES
    links: list[Row]  # LINKS
    trace_facts: list[Row]  # TRACE_FACTS
    detectors: list[Row]  # DETECTORS


# The form of the rows in each list of a wire batch: every list is checked against
# its form (storage/wire/batch.py), so a list added here cannot go to the writer unchecked.
WIRE_FORMS: dict[str, RowForm] = {
    "spans": SPANS, "errors": ERROR_EVENTS, "deploys": DEPLOYS, "requests": REQUESTS,
    "groups": GROUPS, "reopen": REOPEN, "resources": RESOURCES, "logs": LOGS,
    "metric_series": METRIC_SERIES, "metrics": METRIC_WIRE,
    "metric_exemplars": METRIC_EXEMPLARS, "sessions": SESSIONS,
    "feedback": FEEDBACK, "check_ins": CHECK_INS, "operations": OPERATIONS, "edges": EDGES,
    "links": LINKS, "trace_facts": TRACE_FACTS, "detectors": DETECTORS}
if tuple(WIRE_FORMS) != WireBatch._fields[1:]:
    raise ValueError("every list of WireBatch needs its form in WIRE_FORMS, in order")

# WireBatch by keyword, for a third of what the named tuple's own keyword call costs
# (0.2 µs instead of 0.6, which a batch of one error notices).
wire_batch: Callable[..., WireBatch] = _builder(WireBatch._fields, WireBatch)
