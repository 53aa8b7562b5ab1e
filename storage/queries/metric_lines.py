"""One metric's points read into lines: per group of series and per step, the
aggregation of storage/queries/metric_series.py (its docstring says how each reading is
aggregated). Sums, counts, minima, maxima and last values are computed by the
database per series and step; histogram points are read one by one (their buckets
are JSON) and added up here (storage/queries/metric_buckets.py), at most
MAX_HISTOGRAM_POINTS of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Text, and_, cast, func, literal, select
from sqlalchemy.engine import Connection

from storage import schema
from storage.queries.metric_buckets import BucketSum
from storage.queries.values import load

_P = schema.metric_points
QUANTILES = {"p50": 0.50, "p95": 0.95, "p99": 0.99}
MAX_HISTOGRAM_POINTS = 200_000  # histogram points read for one answer
IN_CHUNK = 500  # values in one SQL IN list
T = TypeVar("T")


@dataclass(frozen=True)
class Steps:
    """The time range and its step: step i is [start_ns + i*step, start_ns + (i+1)*step)."""

    start_ns: int
    end_ns: int  # exclusive
    step_s: int

    @property
    def n(self) -> int:
        """How many steps: the last one may end past end_ns."""
        return max(0, -(-(self.end_ns - self.start_ns) // (self.step_s * 1_000_000_000)))


@dataclass(frozen=True)
class GroupSeries:
    group: str | None  # the group_by attribute's value as text; None: without it / all
    series: int  # how many stored series make this line
    values: list[float | None]  # one per step: the aggregation
    count: list[int] | None = None  # histograms: points counted per step
    sum: list[float | None] | None = None  # histograms: sum of the values per step

def chunks(keys: list[T]) -> Iterator[list[T]]:
    for i in range(0, len(keys), IN_CHUNK):
        yield keys[i:i + IN_CHUNK]

def _slot(steps: Steps) -> Any:
    return ((_P.c.time_ns - steps.start_ns) // literal(steps.step_s * 1_000_000_000)).label("slot")


def _in_range(project_id: int, steps: Steps, keys: list[bytes]) -> Any:
    return and_(_P.c.project_id == project_id, _P.c.series_key.in_(keys),
                _P.c.time_ns >= steps.start_ns, _P.c.time_ns < steps.end_ns)


def lines(conn: Connection, project_id: int, steps: Steps, reading: str, aggregation: str,
          grouped: dict[str | None, list[bytes]]) -> tuple[list[GroupSeries], bool]:
    """One line per group (series keys by group value), and whether histogram points
    were left out (more than MAX_HISTOGRAM_POINTS)."""
    if reading == "histogram":
        return _histogram_lines(conn, project_id, steps, aggregation, grouped)
    n = steps.n
    group_of = {key: group for group, keys in grouped.items() for key in keys}
    # Per group and step: [total, points, min, max, sum of each series' last value].
    acc: dict[str | None, list[list[Any]]] = {
        g: [[0.0, 0, None, None, 0.0] for _ in range(n)] for g in grouped}
    value = func.coalesce(_P.c.value, _P.c.sum / func.nullif(_P.c.count, 0))
    for keys in chunks(list(group_of)):
        slot = _slot(steps)
        stats = select(_P.c.series_key, slot, func.sum(value), func.count(value),
                       func.min(value), func.max(value), func.max(_P.c.time_ns).label("last"))
        stats = stats.where(_in_range(project_id, steps, keys)).group_by(_P.c.series_key, slot)
        if reading == "value" and aggregation == "last":
            inner = stats.subquery()
            rows: Iterable[Any] = conn.execute(
                select(inner.c.series_key, inner.c.slot, value).join_from(
                    inner, _P, and_(_P.c.project_id == project_id,
                                    _P.c.series_key == inner.c.series_key,
                                    _P.c.time_ns == inner.c.last)))
            for key, index, v in rows:
                if v is not None and 0 <= int(index) < n:
                    cell = acc[group_of[bytes(key)]][int(index)]
                    cell[4] += float(v)
                    cell[1] += 1
            continue
        for key, index, total, points, low, high, _ in conn.execute(stats):
            if not points or not 0 <= int(index) < n:
                continue
            cell = acc[group_of[bytes(key)]][int(index)]
            cell[0] += float(total)
            cell[1] += int(points)
            cell[2] = float(low) if cell[2] is None else min(cell[2], float(low))
            cell[3] = float(high) if cell[3] is None else max(cell[3], float(high))
    out = []
    for group, cells in acc.items():
        values = [_read(cell, aggregation, steps.step_s) for cell in cells]
        out.append(GroupSeries(group, len(grouped[group]), values))
    return out, False


def _read(cell: list[Any], aggregation: str, step_s: int) -> float | None:
    total, points, low, high, last = cell
    if not points:
        return None
    if aggregation == "sum":
        return float(total)
    if aggregation == "rate":
        return float(total) / step_s
    if aggregation == "avg":
        return float(total) / points
    if aggregation == "last":
        return float(last)
    return low if aggregation == "min" else high


def _histogram_lines(conn: Connection, project_id: int, steps: Steps, aggregation: str,
                     grouped: dict[str | None, list[bytes]]) -> tuple[list[GroupSeries], bool]:
    n = steps.n
    group_of = {key: group for group, keys in grouped.items() for key in keys}
    sums = {g: [BucketSum() for _ in range(n)] for g in grouped}
    read = 0
    capped = False
    for keys in chunks(list(group_of)):
        slot = _slot(steps)
        result = conn.execute(
            select(_P.c.series_key, slot, _P.c.count, _P.c.sum, _P.c.min, _P.c.max,
                   cast(_P.c.buckets, Text)).where(_in_range(project_id, steps, keys))
            .limit(MAX_HISTOGRAM_POINTS - read + 1))
        for key, index, count, total, low, high, buckets in result:
            read += 1
            if read > MAX_HISTOGRAM_POINTS:
                capped = True
                break
            if 0 <= int(index) < n:
                sums[group_of[bytes(key)]][int(index)].add(int(count), total, low, high,
                                                           load(buckets))
        if capped:
            break
    out = []
    for group, cells in sums.items():
        if aggregation in QUANTILES:
            values = [cell.quantile(QUANTILES[aggregation]) for cell in cells]
        elif aggregation == "count":
            values = [float(cell.count) if cell.count else None for cell in cells]
        else:
            values = [cell.sum if cell.sum_known and cell.count else None for cell in cells]
        out.append(GroupSeries(group, len(grouped[group]), values,
                               count=[cell.count for cell in cells],
                               sum=[cell.sum if cell.sum_known else None for cell in cells]))
    return out, capped
