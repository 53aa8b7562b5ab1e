"""The Traces page's scatter (Jaeger's view): each trace of the page a dot at its
start time (x, over the searched range) and duration (y), drawn as SVG on the server
(no script needed; each dot a link to its trace)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from dashboard import format as fmt
from dashboard.timerange import TimeRange
from storage.queries.traces import TraceSummary

WIDTH, HEIGHT = 1000, 200  # the SVG's user units; it scales to the page's width
PAD_LEFT, PAD_BOTTOM, PAD_TOP = 60, 20, 8


@dataclass(frozen=True)
class Dot:
    trace_id: str
    x: float
    y: float
    r: float  # grows with the span count, a little
    error: bool
    title: str


@dataclass(frozen=True)
class Scatter:
    dots: list[Dot]
    y_ticks: list[tuple[float, str]]  # (y, duration label)
    x_ticks: list[tuple[float, str, str]]  # (x, time label, text-anchor)
    width: int = WIDTH
    height: int = HEIGHT
    left: int = PAD_LEFT
    bottom: int = HEIGHT - PAD_BOTTOM


def scatter(traces: list[TraceSummary], tr: TimeRange) -> Scatter | None:
    if not traces:
        return None
    start, end = tr.start_ns, max(tr.end_ns, tr.start_ns + 1)
    top = max(max(t.duration_ns for t in traces), 1)
    plot_w, plot_h = WIDTH - PAD_LEFT - 10, HEIGHT - PAD_BOTTOM - PAD_TOP

    def y_of(ns: int) -> float:
        return round(HEIGHT - PAD_BOTTOM - plot_h * ns / top, 2)

    def x_of(ns: int) -> float:
        share = min(max((ns - start) / (end - start), 0.0), 1.0)
        return round(PAD_LEFT + plot_w * share, 2)

    dots = [Dot(t.trace_id, x_of(t.start_ns), y_of(max(t.duration_ns, 0)),
                round(min(3 + t.span_count ** 0.5, 9), 1), t.error_count > 0,
                f"{t.root_name or t.matched_name} · {fmt.duration_ns(t.duration_ns)} · "
                f"{t.span_count} spans{' · errors' if t.error_count else ''}")
            for t in traces]
    y_ticks = [(y_of(top * i // 2), fmt.duration_ns(top * i // 2) if i else "0")
               for i in range(3)]
    # Times of day over a day at most, else dates and times; the end labels sit inside.
    short = end - start <= 86_400 * 10**9
    x_ticks = []
    for i in range(5):
        at = start + (end - start) * i // 4
        when = datetime.fromtimestamp(at / 1e9, UTC)
        x_ticks.append((x_of(at), f"{when:%H:%M}" if short else f"{when:%m-%d %H:%M}",
                        ("start", "middle", "middle", "middle", "end")[i]))
    return Scatter(dots, y_ticks, x_ticks)
