"""Metrics from spans, in two parts. Request metrics: a server span with an HTTP
method feeds the same per-minute rollups as POST /ingest/requests. Operations and
edges: every other server span, and consumer, client, producer and database spans,
counted into the operation and edge rollups of the service map and the operations
page (processors/operations.py). Runs after classify."""

from __future__ import annotations

from urllib.parse import urlsplit

from model.component import Processor
from model.operations import environment_of
from model.policy import DEFAULT
from model.records import SPAN_KIND_SERVER, STATUS_CODE_ERROR, Batch, RequestMetric, Span
from processors.operations import OperationFolder
from processors.tracefacts import FactNoter


def _route(span: Span) -> str:
    semantic = span.semantic
    route = semantic.get("http.route") or semantic.get("url.path")
    if not route and semantic.get("url.full"):
        route = urlsplit(str(semantic["url.full"])).path
    return str(route or span.name)[:500]


def _status(span: Span) -> int:
    code = span.semantic.get("http.response.status_code")
    try:
        return int(code)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        # No status recorded: an errored span counts as a server error.
        return 500 if span.status_code == STATUS_CODE_ERROR else 0


def request_from_span(span: Span) -> RequestMetric | None:
    method = span.semantic.get("http.request.method")
    if span.kind != SPAN_KIND_SERVER or not method:
        return None
    env = environment_of(span.resource_attributes)
    return RequestMetric(
        method=str(method).upper()[:16],
        route=_route(span),
        status=_status(span),
        duration_ms=max(span.end_ns - span.start_ns, 0) / 1_000_000,
        ts_us=span.start_ns // 1000,
        service=span.service_name[:200],
        env=env[:200],
        trace_id=span.trace_id,
    )


class SpanMetricsProcessor(Processor):
    default_config: dict[str, object] = {}  # no settings: any key is a mistake

    def __init__(self, name: str, config: dict[str, object] | None = None) -> None:
        super().__init__(name, config)
        self.operations = OperationFolder()

    def process(self, batch: Batch) -> Batch:
        settings = (batch.policy or DEFAULT).detectors
        facts = FactNoter(batch, settings) if settings.any else None
        for span in batch.spans:
            metric = request_from_span(span)
            if metric is not None:
                batch.requests.append(metric)
                if facts is not None:  # a root the detectors name by its route
                    facts.root(span, f"{metric.method} {metric.route}")
        self.operations.fold(batch, facts)
        return batch
