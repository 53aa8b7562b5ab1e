"""What the Trace page shows around the waterfall's bars: span kinds by name, a
colour per service, problem markers, span events as a timeline (an exception's stack
trace as it was written), each service's resource once, and collapsed subtrees."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashboard.occurrence import ChainedException, text_chain
from dashboard.waterfall import WaterfallRow
from storage.queries.traces import SpanDetail

SPAN_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer",
              5: "consumer"}
PALETTE_SIZE = 10  # classes svc-0 .. svc-9 in dashboard/static/traces.css
MAX_COLLAPSED = 1_000
_EXCEPTION_KEYS = ("exception.type", "exception.message", "exception.stacktrace")


def kind_name(kind: int) -> str:
    return SPAN_KINDS.get(kind, f"kind {kind}")


def service_colours(rows: list[WaterfallRow]) -> dict[str, int]:
    """{service: palette index}, in the order services first appear in the waterfall
    (the root's service first); beyond the palette, colours repeat."""
    out: dict[str, int] = {}
    for row in rows:
        out.setdefault(row.span.service_name, len(out) % PALETTE_SIZE)
    return out


def service_resources(rows: list[WaterfallRow]) -> dict[str, dict[str, Any]]:
    """{service: its resource attributes}, from its first span: shown once per
    service rather than on every span."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        out.setdefault(row.span.service_name, row.span.resource_attributes)
    return out


def has_problem(span: SpanDetail) -> bool:
    """Error status, or an exception recorded as an event."""
    return span.status_code == 2 or any(e.get("name") == "exception" for e in span.events)


@dataclass(frozen=True)
class EventLine:
    name: str
    offset_ns: int | None  # from the trace's start; None when the event has no time
    exception_type: str | None = None
    exception_message: str | None = None
    stacktrace: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)  # the others
    time_unix_nano: int = 0  # as stored (shown on hover: any 64-bit value may arrive)


def event_lines(span: SpanDetail, trace_start_ns: int) -> list[EventLine]:
    """The span's events in time order, an exception's parts taken out of its
    attributes to be shown as a title and a code block."""
    out = []
    for event in sorted(span.events, key=lambda e: int(e.get("time_unix_nano") or 0)):
        attributes = dict(event.get("attributes") or {})
        at = int(event.get("time_unix_nano") or 0)
        parts = [attributes.pop(k, None) for k in _EXCEPTION_KEYS] \
            if event.get("name") == "exception" else [None, None, None]
        kind, message, stack = (None if p is None else str(p) for p in parts)
        out.append(EventLine(str(event.get("name") or ""), at - trace_start_ns if at else None,
                             kind, message, stack, attributes, at))
    return out


def stack_chain(stacktrace: str | None) -> list[ChainedException]:
    """An exception event's stack trace parsed into its chain (frames innermost first),
    [] when it is no trace of a language we know (then it is shown only as text)."""
    return text_chain(stacktrace.splitlines()) if stacktrace else []


def span_ids_arg(raw: str | None) -> set[str]:
    """A URL argument of span ids, comma-separated (`collapsed`, `highlight`)."""
    if not raw:
        return set()
    return {part.strip().lower() for part in raw.split(",")[:MAX_COLLAPSED] if part.strip()}


def hidden_spans(rows: list[WaterfallRow], collapsed: set[str]) -> set[str]:
    """Spans under a collapsed one (rows come depth-first, so a subtree is the run of
    deeper rows after its top)."""
    hidden: set[str] = set()
    below: int | None = None
    for row in rows:
        if below is not None and row.depth > below:
            hidden.add(row.span.span_id)
            continue
        below = row.depth if row.span.span_id in collapsed and row.children else None
    return hidden
