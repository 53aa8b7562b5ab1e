"""The one internal record stream: typed records, carried in batches.

Receivers decode what arrives into these records; processors transform them;
exporters persist them. Times are integers (nanoseconds for spans, microseconds
for everything else) so that no stage pays for datetime objects on the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# OTLP span kinds and status codes, as the protocol numbers them.
SPAN_KIND_SERVER = 2
STATUS_CODE_ERROR = 2


@dataclass(slots=True)
class Span:
    trace_id: str  # 32 lowercase hex characters
    span_id: str  # 16 lowercase hex characters
    parent_span_id: str  # "" for a root span
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str
    service_name: str
    scope_name: str
    resource_attributes: dict[str, Any]
    attributes: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    # Filled by the classify processor: http, database, search, messaging or custom.
    category: str = ""
    # Normalised semantic-convention fields, filled by the classify processor.
    semantic: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class SourceContext:
    file: str
    lineno: int
    context_line: str
    pre_context: list[str] = field(default_factory=list)
    post_context: list[str] = field(default_factory=list)


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


@dataclass(slots=True)
class Deploy:
    git_sha: str
    ts_us: int
    version: str | None = None
    env: str | None = None
    deployer: str | None = None
    description: str | None = None


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
class GroupDelta:
    """What one batch adds to one error group; built by the grouping processor."""

    fingerprint: str
    exception_class: str
    message: str
    count: int
    first_seen_us: int
    last_seen_us: int
    hourly: dict[int, int]  # hour start (epoch seconds) -> occurrences


@dataclass(slots=True)
class Batch:
    """Records from one request, all for one project."""

    project_id: int
    spans: list[Span] = field(default_factory=list)
    errors: list[ErrorEvent] = field(default_factory=list)
    deploys: list[Deploy] = field(default_factory=list)
    requests: list[RequestMetric] = field(default_factory=list)
    # Derived by processors, persisted by exporters.
    groups: dict[str, GroupDelta] = field(default_factory=dict)
    reopen_after: dict[str, int] = field(default_factory=dict)  # fingerprint -> latest ts_us
    # Size of the request body that carried the batch; bounds the queue by bytes.
    approx_bytes: int = 0

    def record_count(self) -> int:
        return len(self.spans) + len(self.errors) + len(self.deploys) + len(self.requests)
