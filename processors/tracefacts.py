"""What the performance detectors read of a batch's spans (model/detectors.py's facts),
noted by the spanmetrics processor as it goes over them (processors/operations.py,
processors/spanmetrics.py) when the project's detectors are on; the writer gathers
them per trace and runs the detectors once the trace is complete
(storage/writer/detect.py).

Only the calls a detector could find something in are noted, judged on the batch and
the project's thresholds, because every fact costs its span a wire row and the
writer a place in memory:

- a database call whose normalised statement comes back under the same parent within
  the batch (an N+1 repeats its statement; a lone call cannot be one), or one slow
  enough for the slow-query detector;
- an HTTP call slow enough for the consecutive-HTTP detector;
- every local root (server and consumer spans, a trace's root), which names the
  transaction the calls ran in; it may come in another batch than its calls.

An SDK exports a request's spans in one batch unless its export splits them; a loop
split in two keeps its repeated calls on both sides, and the writer joins them, so
what a split can cost is the one call left alone on a side.

Facts are plain tuples in model/detectors.py's Fact order (a named tuple costs three
times as much to build, for each of many spans).
"""

from __future__ import annotations

from typing import Any

from model.detectors import DATABASE, HTTP, ROOT, DetectorSettings
from model.operations import OPERATION_LENGTH, SERVICE_LENGTH, environment_of
from model.records import Batch, Span

_NS_PER_MS = 1_000_000


class FactNoter:
    """The facts of one batch: `root` and `call` for each span, then `done`."""

    __slots__ = ("out", "settings", "_db", "_slow_db_ns", "_slow_http_ns", "_repeats",
                 "_labels")

    def __init__(self, batch: Batch, settings: DetectorSettings) -> None:
        self.out = batch.trace_facts
        self.settings = settings
        # (trace, parent, statement) -> the database calls, until `done` keeps those
        # that repeat.
        self._db: dict[tuple[str, str, str], list[tuple[Any, ...]]] = {}
        self._slow_db_ns = (int(settings.slow_query_min_ms * _NS_PER_MS)
                            if settings.slow_query else None)
        self._slow_http_ns = (int(settings.consecutive_http_min_call_ms * _NS_PER_MS)
                              if settings.consecutive_http else None)
        # How many calls of one statement under one parent make them worth noting.
        self._repeats = (min(2, max(settings.n_plus_one_min_spans, 1))
                         if settings.n_plus_one else None)
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
        fact = (span.trace_id, span.span_id, span.parent_span_id, DATABASE, service,
                statement, span.start_ns, span.end_ns, "", "")
        if self._repeats is not None:
            self._db.setdefault((span.trace_id, span.parent_span_id, statement),
                                []).append(fact)
        elif self._slow_db_ns is not None and span.end_ns - span.start_ns >= self._slow_db_ns:
            self.out.append(fact)

    def http(self, span: Span, peer: str, service: str) -> None:
        if self._slow_http_ns is None or span.end_ns - span.start_ns < self._slow_http_ns:
            return
        method = span.semantic.get("http.request.method")
        if not method:
            return
        template = span.semantic.get("url.template") or ""
        self.out.append((span.trace_id, span.span_id, span.parent_span_id, HTTP, service,
                         f"{str(method).upper()} {peer}{template}"[:OPERATION_LENGTH],
                         span.start_ns, span.end_ns, "", ""))

    def done(self) -> None:
        repeats, slow = self._repeats, self._slow_db_ns
        for calls in self._db.values():
            if repeats is not None and len(calls) >= repeats:
                self.out.extend(calls)
            elif slow is not None:
                self.out.extend(c for c in calls if c[7] - c[6] >= slow)
        self._db.clear()
