"""A trace as a waterfall: spans depth-first under their parents, each with its
offset and width as a share of the whole trace, so bars are drawn to scale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storage.queries.traces import SpanDetail


@dataclass(frozen=True)
class WaterfallRow:
    span: SpanDetail
    depth: int  # 0 for a root, or for a span whose parent never arrived
    offset_ns: int  # from the trace's start
    duration_ns: int
    offset_pct: float  # 0..100
    width_pct: float  # 0..100, at least a sliver so instant spans stay visible
    orphan: bool  # its parent is not in the trace
    children: int = 0  # spans directly under it (a subtree to collapse when > 0)


MIN_WIDTH_PCT = 0.2


def waterfall(spans: list[SpanDetail]) -> tuple[list[WaterfallRow], int, int]:
    """(rows, trace start ns, trace duration ns)."""
    if not spans:
        return [], 0, 0
    start = min(s.start_ns for s in spans)
    end = max(max(s.end_ns, s.start_ns) for s in spans)
    total = max(end - start, 1)
    ids = {s.span_id for s in spans}
    children: dict[str, list[SpanDetail]] = {}
    roots: list[SpanDetail] = []
    for s in spans:
        if s.parent_span_id and s.parent_span_id in ids and s.parent_span_id != s.span_id:
            children.setdefault(s.parent_span_id, []).append(s)
        else:
            roots.append(s)
    rows: list[WaterfallRow] = []
    seen: set[str] = set()
    # Iterative depth-first walk: a deep or cyclic trace cannot exhaust the stack.
    stack = [(s, 0) for s in sorted(roots, key=_order, reverse=True)]
    # Spans in a parent cycle have no root above them: show them at the top level.
    leftovers = iter(sorted(spans, key=_order))
    while stack or len(seen) < len(spans):
        if not stack:
            stack.append((next(s for s in leftovers if s.span_id not in seen), 0))
        span, depth = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        duration = max(span.end_ns - span.start_ns, 0)
        offset = span.start_ns - start
        rows.append(WaterfallRow(
            span, depth, offset, duration, offset_pct=100 * offset / total,
            width_pct=max(100 * duration / total, MIN_WIDTH_PCT),
            orphan=bool(span.parent_span_id) and span.parent_span_id not in ids,
            children=len(children.get(span.span_id, ()))))
        for child in sorted(children.get(span.span_id, []), key=_order, reverse=True):
            stack.append((child, depth + 1))
    return rows, start, end - start


def _order(span: SpanDetail) -> tuple[int, str]:
    return span.start_ns, span.span_id


@dataclass(frozen=True)
class LogMark:
    log: dict[str, Any]  # a record as storage/queries/logs.py reads it
    offset_ns: int  # from the trace's start (negative: before its first span)
    offset_pct: float  # 0..100, clamped to the trace's extent


def place_logs(rows: list[WaterfallRow], start_ns: int, duration_ns: int,
               logs: list[dict[str, Any]]
               ) -> tuple[dict[str, list[LogMark]], list[LogMark]]:
    """({span id: its records}, records on no span of the trace), each in time order
    with its place on the waterfall's scale."""
    spans = {row.span.span_id for row in rows}
    total = max(duration_ns, 1)
    on_spans: dict[str, list[LogMark]] = {}
    elsewhere: list[LogMark] = []
    for log in sorted(logs, key=lambda item: (item["time_ns"], item["id"])):
        offset = log["time_ns"] - start_ns
        mark = LogMark(log, offset, min(max(100 * offset / total, 0.0), 100.0))
        if log["span_id"] and log["span_id"] in spans:
            on_spans.setdefault(log["span_id"], []).append(mark)
        else:
            elsewhere.append(mark)
    return on_spans, elsewhere
