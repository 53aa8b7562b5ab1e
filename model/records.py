"""The one internal record stream: typed records, carried in batches.

Receivers decode what arrives into these records; processors transform them;
exporters persist them. Times are integers (nanoseconds for spans, microseconds
for everything else) so that no stage pays for datetime objects on the hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from model.fingerprint import Grouping
from model.groupcounts import GroupDelta
from model.operations import Rollup
from model.otlp_values import any_value, attributes_of, find_values, links_of
from model.policy import Policy

# OTLP span kinds and status codes, as the protocol numbers them.
SPAN_KIND_INTERNAL = 1
SPAN_KIND_SERVER = 2
SPAN_KIND_CLIENT = 3
SPAN_KIND_PRODUCER = 4
SPAN_KIND_CONSUMER = 5
STATUS_CODE_ERROR = 2


class _LazyAttributes:
    """What Span and LogRecord share: attributes read out of the OTLP message the
    record arrived in (`otlp`) only when a stage asks for them (`_attributes` is None
    until then), `find_attributes`, which reads only the ones it is asked for, and
    `otlp_bytes`, the message's encoding made once for whoever asks."""

    __slots__ = ("otlp", "_attributes", "_otlp_bytes")
    otlp: Any  # the OTLP message the record was decoded from, if any
    _attributes: dict[str, Any] | None
    _otlp_bytes: bytes | None

    def otlp_bytes(self) -> bytes:
        """`otlp` serialised, once: the scrubbing stage's quick tests, the log
        exceptions stage's and the stored body (storage/spanbody.py, logbody.py) each
        want the bytes of a record no stage read, and serialising is about a
        microsecond a record. Nothing changes a record's message after decoding (a
        stage's changes go to its values), so the bytes stay the message's."""
        data = self._otlp_bytes
        if data is None:
            data = self._otlp_bytes = self.otlp.SerializeToString()
        return data

    @property
    def attributes(self) -> dict[str, Any]:
        if self._attributes is None:
            self._attributes = attributes_of(self.otlp.attributes)
        return self._attributes

    @attributes.setter
    def attributes(self, value: dict[str, Any]) -> None:
        self._attributes = value

    def find_attributes(self, wanted: frozenset[str]) -> dict[str, Any]:
        """The attributes named in `wanted` that the record has."""
        if self._attributes is None:
            return find_values(self.otlp.attributes, wanted)
        return {k: v for k, v in self._attributes.items() if k in wanted}

    def unread_attributes(self) -> Any:
        """The OTLP KeyValues the attributes are still unread in, or None once they
        were read out (`attributes` then holds them, maybe changed): for a stage that
        reads a few values its own way without reading the rest."""
        return self.otlp.attributes if self._attributes is None else None


class Span(_LazyAttributes):
    """One span. `attributes`, `events` and `links` are read out of the OTLP message the
    span arrived in (`otlp`) only when a stage asks for them: a span that no stage looks
    into is stored in the bytes it came in, which is most of what makes trace ingest
    cheap. A stage that reads them may change them; the stored span then follows
    the changed values. Stages that only need a few attributes call
    `find_attributes`, which reads no others.

    A link is `{"trace_id": hex, "span_id": hex, "trace_state": str, "flags": int,
    "attributes": {...}}`, as OTLP's Span.Link has them (`flags` holds the linked
    context's W3C trace flags: 1 is sampled). A span decoded from something else than
    an OTLP message (Sentry's span stream) carries its links here, so that they are
    stored as an OTLP span's are."""

    __slots__ = ("trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns",
                 "end_ns", "status_code", "status_message", "service_name", "scope_name",
                 "resource_attributes", "category", "semantic", "_events", "_has_events",
                 "_links")

    def __init__(self, trace_id: str, span_id: str, parent_span_id: str, name: str,
                 kind: int, start_ns: int, end_ns: int, status_code: int,
                 status_message: str, service_name: str, scope_name: str,
                 resource_attributes: dict[str, Any],
                 attributes: dict[str, Any] | None = None,
                 events: list[dict[str, Any]] | None = None,
                 category: str = "", semantic: dict[str, Any] | None = None,
                 otlp: Any = None, has_events: bool | None = None,
                 links: list[dict[str, Any]] | None = None) -> None:
        self.trace_id = trace_id  # 32 lowercase hex characters
        self.span_id = span_id  # 16 lowercase hex characters
        self.parent_span_id = parent_span_id  # "" for a root span
        self.name = name
        self.kind = kind
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.status_code = status_code
        self.status_message = status_message
        self.service_name = service_name
        self.scope_name = scope_name
        self.resource_attributes = resource_attributes
        # Filled by the classify processor: http, database, search, messaging or custom.
        self.category = category
        # Normalised semantic-convention fields, filled by the classify processor.
        self.semantic = {} if semantic is None else semantic
        # The opentelemetry.proto trace_pb2.Span this span was decoded from, if any.
        self.otlp = otlp
        self._otlp_bytes = None
        self._attributes = attributes if attributes is not None or otlp is not None else {}
        self._events = events if events is not None or otlp is not None else []
        self._links = links if links is not None or otlp is not None else []
        # Whether `otlp` has events, when the decoder already looked (it checks their
        # times): reaching a message's repeated field costs about a microsecond.
        self._has_events = has_events

    @property
    def events(self) -> list[dict[str, Any]]:
        if self._events is None:
            self._events = [{"name": e.name, "time_unix_nano": e.time_unix_nano,
                             "attributes": attributes_of(e.attributes)}
                            for e in self.otlp.events]
        return self._events

    @events.setter
    def events(self, value: list[dict[str, Any]]) -> None:
        self._events = value

    @property
    def links(self) -> list[dict[str, Any]]:
        if self._links is None:
            self._links = links_of(self.otlp.links)
        return self._links

    @links.setter
    def links(self, value: list[dict[str, Any]]) -> None:
        self._links = value

    @property
    def links_unread(self) -> bool:
        """True while the links are only in `otlp`, as they came: no stage asks for
        them, so a touched span's message keeps its links without reading them."""
        return self._links is None

    @property
    def untouched(self) -> bool:
        """True while `otlp` still holds the span's attributes, events and links as
        they are."""
        return self._attributes is None and self._events is None and self._links is None

    def has_events(self) -> bool:
        if self._events is None:
            if self._has_events is None:
                self._has_events = len(self.otlp.events) > 0
            return self._has_events
        return bool(self._events)

    def __repr__(self) -> str:
        return (f"Span(trace_id={self.trace_id!r}, span_id={self.span_id!r}, "
                f"name={self.name!r}, kind={self.kind})")


class LogRecord(_LazyAttributes):
    """One OTLP log record. As for Span, `attributes` and `body` are read out of the
    OTLP message it arrived in (`otlp`, a logs_pb2.LogRecord) only when a stage asks
    for them, and a record no stage changed is stored in the bytes it came in.
    `body` is any OTLP value as a Python value (otlp_values.any_value), None when
    unset. Ids are lowercase hex, "" when unset (a log record need not be in a trace)."""

    __slots__ = ("time_ns", "observed_ns", "severity_number", "severity_text",
                 "trace_id", "span_id", "flags", "event_name", "service_name",
                 "scope_name", "resource_attributes", "_body")

    def __init__(self, time_ns: int, observed_ns: int, severity_number: int,
                 severity_text: str, trace_id: str, span_id: str, flags: int,
                 event_name: str, service_name: str, scope_name: str,
                 resource_attributes: dict[str, Any],
                 attributes: dict[str, Any] | None = None, body: Any = None,
                 otlp: Any = None) -> None:
        self.time_ns = time_ns  # 0 when the sender left it unset
        self.observed_ns = observed_ns
        self.severity_number = severity_number  # 0 (unspecified) to 24 (FATAL4)
        self.severity_text = severity_text
        self.trace_id = trace_id
        self.span_id = span_id
        self.flags = flags
        self.event_name = event_name
        self.service_name = service_name
        self.scope_name = scope_name
        self.resource_attributes = resource_attributes
        self.otlp = otlp
        self._otlp_bytes = None
        if otlp is None:
            self._attributes = {} if attributes is None else attributes
            self._body: Any = body
        else:
            self._attributes = attributes
            self._body = _UNREAD if body is None else body

    @property
    def body(self) -> Any:
        if self._body is _UNREAD:
            self._body = (any_value(self.otlp.body) if self.otlp.HasField("body")
                          else None)
        return self._body

    @body.setter
    def body(self, value: Any) -> None:
        self._body = value

    @property
    def untouched(self) -> bool:
        """True while `otlp` still holds the record's attributes and body as they are."""
        return self._attributes is None and self._body is _UNREAD

    @property
    def when_ns(self) -> int:
        """When it happened: its time, or when it was observed if the time is unset."""
        return self.time_ns or self.observed_ns

    def __repr__(self) -> str:
        return (f"LogRecord(time_ns={self.time_ns}, severity={self.severity_number}, "
                f"trace_id={self.trace_id!r})")


_UNREAD: Any = object()  # a LogRecord body not yet read out of its message


@dataclass(slots=True)
class SourceContext:
    file: str
    lineno: int
    context_line: str
    pre_context: list[str] = field(default_factory=list)
    post_context: list[str] = field(default_factory=list)


# An error's levels, most severe first (Sentry's): what ErrorEvent.level holds.
LEVELS = ("fatal", "error", "warning", "info", "debug")


@dataclass(slots=True)
class ErrorEvent:
    fingerprint: str
    exception_class: str
    message: str
    backtrace: list[str]
    ts_us: int
    request_id: str | None = None
    user_id: str | None = None
    params: dict[str, Any] | None = None
    source_context: SourceContext | None = None
    trace_id: str | None = None
    span_id: str | None = None
    # From the resource of the span or log record an error came from (OpenTelemetry
    # only): service.name, deployment.environment(.name), service.version.
    service: str | None = None
    environment: str | None = None
    release: str | None = None
    # The time of the log record an error came from, so that its record can be found
    # (by trace id and time); None for an error that came from no log record.
    log_time_ns: int | None = None
    # Set by the exceptions processors on errors with a trace and a span id: the same
    # exception sent as a span event and as a log record has one key, and the store
    # keeps (and counts) only the first copy (processors/exceptions.occurrence_key).
    occurrence_key: str | None = None
    # Optional on every door: a string map the error list filters by and a group's tag
    # distribution counts (with service, environment and release above).
    tags: dict[str, str] | None = None
    # Sentry's level: one of LEVELS; None when not sent.
    level: str | None = None
    # The exception chain when the sender gave it as data (a Sentry event), root cause
    # first and the exception raised last at the end, as Sentry orders it. Each is
    # {"type", "value", "module", "mechanism", "frames"}; each frame (outermost first,
    # innermost last) is {"filename", "abs_path", "function", "module", "lineno",
    # "colno", "in_app", "context_line", "pre_context", "post_context"}, any of which
    # may be absent. `backtrace` and `source_context` are derived from it.
    exceptions: list[dict[str, Any]] | None = None
    # What else the sender told about the event, kept and shown as sent: user,
    # request, contexts, breadcrumbs, logentry, platform, sdk (a Sentry event's).
    context: dict[str, Any] | None = None
    # What the door read of the error's group, from which the grouping processor
    # (processors/grouping.py) decides `fingerprint` by model/fingerprint.py's rule;
    # None when the door took `fingerprint` as sent (the custom door: the client's).
    grouping: Grouping | None = None
    # For symbolication (processors/symbolicate.py), read by the doors and not stored:
    # a Sentry event's debug ids by the file they are for (`debug_meta.images` of
    # type sourcemap: code_file -> debug_id), and its `dist`.
    debug_ids: dict[str, str] | None = None
    dist: str | None = None


@dataclass(slots=True)
class Deploy:
    git_sha: str
    ts_us: int
    version: str | None = None
    env: str | None = None
    deployer: str | None = None
    description: str | None = None
    # The service deployed (docs/sending-data.md, "Deploys of one service"): its impact is then
    # measured on that service's requests only.
    service: str | None = None


@dataclass(slots=True)
class RequestMetric:
    method: str
    route: str
    status: int
    duration_ms: float
    ts_us: int
    service: str = ""
    env: str = ""
    request_id: str | None = None
    trace_id: str | None = None


@dataclass(slots=True)
class SessionCount:
    """What one session update, or one bucket of pre-aggregated sessions, adds to its
    release's health (docs/release-health.md), at most once: the writer adds the
    counts only the first time it meets `mark` in the project (storage/writer/sessions.py).
    A session update gives a mark for its session's start and one for its end, so a
    later update of the same session, or a retried envelope, adds nothing again.

    The outcomes are Sentry's aggregate buckets': each ended session is exactly one of
    exited, errored (had errors, but neither crashed nor abnormal), crashed or abnormal."""

    mark: bytes  # 16 bytes (receiver/sentry/sessions.py says how each is made)
    release: str
    environment: str  # "" when none
    started_s: int  # epoch seconds of the minute the session started in
    user: str  # the distinct id (`did`), "" when none
    started: int = 0
    exited: int = 0
    errored: int = 0
    crashed: int = 0
    abnormal: int = 0


@dataclass(slots=True)
class Feedback:
    """What a user said about an error: Sentry's `feedback` item (the user-feedback
    API and widget) or a legacy `user_report`, linked to the event it names."""

    feedback_id: str  # 32 hex: the item's own event id (retries store it once)
    ts_us: int
    message: str
    source: str  # "feedback" or "user_report"
    name: str | None = None
    email: str | None = None
    associated_event_id: str | None = None  # 32 hex: the error event it is about
    url: str | None = None
    release: str | None = None
    environment: str | None = None


# OTLP aggregation temporality, as the protocol numbers it.
TEMPORALITY_UNSPECIFIED = 0
TEMPORALITY_DELTA = 1
TEMPORALITY_CUMULATIVE = 2
# The kinds of metric data point (MetricPoint.kind), named after OTLP's Metric.data.
GAUGE = "gauge"
SUM = "sum"
HISTOGRAM = "histogram"
EXPONENTIAL_HISTOGRAM = "exponential_histogram"
SUMMARY = "summary"
METRIC_KINDS = (GAUGE, SUM, HISTOGRAM, EXPONENTIAL_HISTOGRAM, SUMMARY)


@dataclass(slots=True)
class MetricPoint:
    """One OTLP metric data point, with what it needs of its metric, scope and
    resource: a point is a record on its own, as a span is. Values are as sent
    (cumulative stays cumulative here: the store converts, exporters/forward sends
    them on as they came). Which value fields mean anything depends on `kind`:
    - gauge, sum: `value` (an int or a float, as sent);
    - histogram: `count`, `sum`, `min`, `max`, `bounds` and `bucket_counts`
      (len(bounds) + 1 of them, or none);
    - exponential_histogram: `count`, `sum`, `min`, `max`, `scale`, `zero_count`,
      `zero_threshold`, `positive_offset`/`positive_counts`,
      `negative_offset`/`negative_counts`;
    - summary: `count`, `sum`, `quantiles` ([(quantile, value), ...]).
    `sum`, `min` and `max` are None when the sender left them unset."""

    name: str
    unit: str
    description: str
    kind: str  # one of METRIC_KINDS
    temporality: int  # TEMPORALITY_*; UNSPECIFIED for gauges and summaries
    monotonic: bool  # sums only
    service_name: str
    resource_attributes: dict[str, Any]  # shared by the points of one resource
    scope_name: str
    attributes: dict[str, Any]
    start_ns: int  # 0 when unset
    time_ns: int
    value: float | int | None = None
    count: int = 0
    sum: float | None = None
    min: float | None = None
    max: float | None = None
    # Sequences: decoders set lists; the defaults are shared empty tuples, since a
    # point has only the few its kind uses and a list each would cost for nothing.
    bounds: Sequence[float] = ()
    bucket_counts: Sequence[int] = ()
    scale: int = 0
    zero_count: int = 0
    zero_threshold: float = 0.0
    positive_offset: int = 0
    positive_counts: Sequence[int] = ()
    negative_offset: int = 0
    negative_counts: Sequence[int] = ()
    quantiles: Sequence[tuple[float, float]] = ()
    flags: int = 0  # OTLP DataPointFlags (1: no recorded value)
    # Exemplars as sent, for the forward exporter: {"time_ns", "value", "trace_id",
    # "span_id" (hex, "" when unset), "attributes"}.
    exemplars: Sequence[dict[str, Any]] = ()
    scope_version: str = ""


@dataclass(slots=True)
class CheckIn:
    """One cron monitor check-in (a Sentry `check_in` item or the HTTP check-in
    door): a run of `monitor_slug` started (in_progress) or finished (ok, error).
    A later check-in with the same `check_in_id` finishes the run it names; with
    `latest` set (Sentry's all-zero id, and the HTTP door without an id) it finishes
    the monitor's latest run still in progress, or is a run of its own. The monitor
    is created or updated from `monitor_config` (model/cron.py's MonitorConfig)."""

    check_in_id: str  # 32 lowercase hex
    monitor_slug: str
    status: str  # one of model.cron.CHECKIN_STATUSES
    ts_us: int  # when it was received
    duration_s: float | None = None
    environment: str | None = None
    release: str | None = None
    trace_id: str | None = None
    monitor_config: dict[str, Any] | None = None  # MonitorConfig.as_dict()
    latest: bool = False


@dataclass(slots=True)
class Batch:
    """Records from one request, all for one project."""

    project_id: int
    spans: list[Span] = field(default_factory=list)
    errors: list[ErrorEvent] = field(default_factory=list)
    deploys: list[Deploy] = field(default_factory=list)
    requests: list[RequestMetric] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    metrics: list[MetricPoint] = field(default_factory=list)
    sessions: list[SessionCount] = field(default_factory=list)
    feedback: list[Feedback] = field(default_factory=list)
    check_ins: list[CheckIn] = field(default_factory=list)
    # Derived by processors, persisted by exporters.
    groups: dict[str, GroupDelta] = field(default_factory=dict)
    reopen_after: dict[str, int] = field(default_factory=dict)  # fingerprint -> latest ts_us
    # The batch's operation and edge rollups and the halves of calls to pair
    # (processors/operations.py, model/operations.py).
    operations: dict[tuple[Any, ...], Rollup] = field(default_factory=dict)
    edges: dict[tuple[Any, ...], Rollup] = field(default_factory=dict)
    links: list[tuple[str, str, int, str, str, str]] = field(default_factory=list)
    # What the performance detectors read of the batch's spans: tuples in the order of
    # model/detectors.py's Fact, noted by processors/tracefacts.py.
    trace_facts: list[tuple[Any, ...]] = field(default_factory=list)
    # Size of the request body that carried the batch; bounds the queue by bytes.
    approx_bytes: int = 0
    # The project's policy (scrubbing, inbound filters), set by the pipeline from the
    # policy extension before any stage runs (Pipeline.with_policy); None outside a
    # service, where the stages take model/policy.py's DEFAULT.
    policy: Policy | None = None
    # The client's address as the door saw it (the inbound filters' IP ranges).
    client_ip: str | None = None
    # Records taken out by the inbound filters, by signal (processors/filters.py), for
    # runtime/drops.count_filtered to count where metrics are kept.
    filtered: dict[str, int] = field(default_factory=dict)

    def record_count(self) -> int:
        return (len(self.spans) + len(self.errors) + len(self.deploys) + len(self.requests)
                + len(self.logs) + len(self.metrics) + len(self.sessions)
                + len(self.feedback) + len(self.check_ins))
