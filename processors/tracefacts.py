"""What the performance detectors read of a batch's spans (model/detectors.py's facts),
noted by the spanmetrics processor as it goes over them (processors/operations.py,
processors/spanmetrics.py) when the project's detectors are on; the writer gathers
them per trace and runs the detectors once the trace is complete
(storage/writer/detect.py).

Only the calls a detector could find something in are noted, judged on the span
alone and the project's thresholds, because every fact costs its span a wire row and
the writer a place in memory:

- every database call, while the N+1 detector is on (else only one slow enough for
  the slow-query detector);
- an HTTP call slow enough for the consecutive-HTTP detector;
- every local root (server and consumer spans, a trace's root), which names the
  transaction the calls ran in; it may come in another batch than its calls.

Nothing is judged on the batch: a trace's spans come in as many batches as its SDK,
a Collector or sentry-sdk's span stream cut it into (OpenTelemetry's
SimpleSpanProcessor sends each span alone), so whether a statement repeats under its
parent is known only to the writer, which holds the whole trace
(storage/writer/detect.py). What that costs: a database call no detector finds
anything in is noted too (a wire row, a place in the writer's bounded memory), where
a test within the batch once left out the lone ones, and with them every N+1 whose
spans were exported apart.

Facts are plain tuples in model/detectors.py's Fact order (a named tuple costs three
times as much to build, for each of many spans).
"""

from __future__ import annotations

from model.detectors import DATABASE, HTTP, ROOT, DetectorSettings
from model.operations import OPERATION_LENGTH, SERVICE_LENGTH, environment_of
from model.records import Batch, Span

_NS_PER_MS = 1_000_000


class FactNoter:
    """The facts of one batch: `root`, `database` and `http` for the spans they name."""

    __slots__ = ("out", "settings", "_all_db", "_slow_db_ns", "_slow_http_ns", "_labels")

    def __init__(self, batch: Batch, settings: DetectorSettings) -> None:
        self.out = batch.trace_facts
        self.settings = settings
        # Every database call while an N+1 could be made of it; else the slow ones.
        self._all_db = settings.n_plus_one
        self._slow_db_ns = (int(settings.slow_query_min_ms * _NS_PER_MS)
                            if settings.slow_query else None)
        self._slow_http_ns = (int(settings.consecutive_http_min_call_ms * _NS_PER_MS)
                              if settings.consecutive_http else None)
        # Per resource (a batch's spans share a few): (release, environment).
        self._labels: dict[int, tuple[str, str]] = {}

    def root(self, span: Span, name: str) -> None:
        """A local root: `name` is its transaction or route."""
        resource = span.resource_attributes
        labels = self._labels.get(id(resource))
        if labels is None:
            labels = self._labels[id(resource)] = (
                str(resource.get("service.version") or "")[:200],
                environment_of(resource)[:200])
        self.out.append((span.trace_id, span.span_id, span.parent_span_id, ROOT,
                         span.service_name[:SERVICE_LENGTH], name[:OPERATION_LENGTH],
                         span.start_ns, span.end_ns, *labels))

    def database(self, span: Span, statement: str, service: str) -> None:
        """A database call: `statement` normalised (model/statement.py)."""
        if self._all_db or (self._slow_db_ns is not None
                            and span.end_ns - span.start_ns >= self._slow_db_ns):
            self.out.append((span.trace_id, span.span_id, span.parent_span_id, DATABASE,
                             service, statement, span.start_ns, span.end_ns, "", ""))

    def http(self, span: Span, peer: str, service: str) -> None:
        """An outgoing HTTP call to `peer`, noted if slow enough to count."""
        if self._slow_http_ns is None or span.end_ns - span.start_ns < self._slow_http_ns:
            return
        method = span.semantic.get("http.request.method")
        if not method:
            return
        template = span.semantic.get("url.template") or ""
        self.out.append((span.trace_id, span.span_id, span.parent_span_id, HTTP, service,
                         f"{str(method).upper()} {peer}{template}"[:OPERATION_LENGTH],
                         span.start_ns, span.end_ns, "", ""))
