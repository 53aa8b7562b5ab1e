"""Stored metrics (metric_series, metric_points) for the Metrics page and its read
API: the metric names, and one metric's series over a time range, bucketed by a
step, filtered by attributes and grouped by one attribute.

How points are read depends on the series' `points` column (written by
storage/writer/points.py):
- "delta" sums (counters): each point is what happened in its interval, so a step
  adds up the points that end in it ("sum"), or divides that by the step's seconds
  ("rate", per second);
- "value" series (gauges, up-down counters, summaries read as their mean): "last",
  "avg", "min" or "max" of the points in the step. Several series in one group are
  combined as Prometheus' `sum by` does for "last" (the last value of each series,
  added up: memory in use over all instances), and over all their points for the
  others;
- histograms (explicit and exponential, always deltas): the bucket counts of the
  step's points added up, read as p50/p95/p99 (storage/queries/metric_buckets.py),
  with the step's count and sum.
The attributes that filter and group are the point's, then its resource's
(service.name, host.name, ...): a point attribute wins over a resource one.

The answer also carries the newest exemplars of the series read within the range
(metric_exemplars: a few per series and minute, storage/rows.py), each with its
trace and span: the way from a metric to the trace of a call it measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Text, and_, cast, func, select
from sqlalchemy.engine import Connection

from model.records import METRIC_KINDS
from storage import schema
from storage.queries import metric_lines
from storage.queries.metric_buckets import attribute_text
from storage.queries.metric_lines import GroupSeries, Steps, chunks
from storage.queries.values import load
from storage.store import Store

_S, _P, _RES = schema.metric_series, schema.metric_points, schema.resources
_E = schema.metric_exemplars
KINDS = METRIC_KINDS
HISTOGRAM_KINDS = ("histogram", "exponential_histogram")
# The aggregations each reading allows; the first is the default.
AGGREGATIONS = {"delta": ("sum", "rate"), "value": ("last", "avg", "min", "max"),
                "histogram": ("p95", "p50", "p99", "count", "sum")}
MAX_SERIES = 2000  # series of one metric read for one answer
MAX_METRICS = 1000
MAX_EXEMPLARS = 100  # the newest exemplars of one answer


@dataclass(frozen=True)
class MetricInfo:
    name: str
    kind: str  # the kind most of its series have
    unit: str
    description: str
    services: list[str]
    series: int
    last_seen_ns: int | None  # the newest point of any of its series
    kinds: list[str]  # every kind stored under this name, `kind` first


@dataclass(frozen=True)
class Query:
    """What one metric chart asks for; None means any (or no grouping)."""

    name: str
    start_ns: int
    end_ns: int  # exclusive
    step_s: int
    aggregation: str | None = None  # None: the reading's default
    kind: str | None = None  # None: the kind most of the metric's series have
    service: str | None = None
    filters: dict[str, str] = field(default_factory=dict)
    group_by: str | None = None
    max_groups: int = 20


@dataclass(frozen=True)
class Exemplar:
    """One measurement linked to its trace: `span_id` is "" when the sender named no
    span; `value` None when it was not finite."""

    time_ns: int
    value: float | None
    trace_id: str  # 32 hex
    span_id: str
    group: str | None  # the line its series is drawn in (as GroupSeries.group)


@dataclass(frozen=True)
class MetricData:
    name: str
    kind: str
    unit: str
    description: str
    reading: str  # "delta", "value" or "histogram": a key of AGGREGATIONS
    aggregation: str
    aggregations: list[str]  # what this reading allows
    kinds: list[str]  # every kind stored under this name
    services: list[str]  # services sending it (for the service filter)
    attribute_keys: list[str]  # keys seen on its series (for the filters and grouping)
    service: str | None
    filters: dict[str, str]
    group_by: str | None
    step_s: int
    t: list[int]  # step starts, epoch seconds
    groups: list[GroupSeries]  # largest first, at most max_groups
    groups_total: int  # groups with points in the range
    max_groups: int
    groups_capped: bool  # groups_total > max_groups: the smallest were left out
    series_matched: int  # series of this kind and reading matching the filters
    series_read: int  # at most MAX_SERIES of them
    series_capped: bool  # more than MAX_SERIES matched: only the first were read
    points_capped: bool  # histograms: more points in the range than were read
    exemplars: list[Exemplar]  # the newest in the range, at most MAX_EXEMPLARS


def reading_of(kind: str, points: str) -> str:
    if kind in HISTOGRAM_KINDS:
        return "histogram"
    return "delta" if points == "delta" else "value"


def list_metrics(store: Store, project_id: int, service: str | None = None
                 ) -> list[MetricInfo]:
    """Every metric name of the project (or of one service), by name."""
    last = (select(func.max(_P.c.time_ns))
            .where(and_(_P.c.project_id == _S.c.project_id, _P.c.series_key == _S.c.series_key))
            .scalar_subquery())
    where = [_S.c.project_id == project_id]
    if service is not None:
        where.append(_S.c.service_name == service)
    inner = select(_S.c.name, _S.c.kind, _S.c.unit, _S.c.description, _S.c.service_name,
                   last.label("last_ns")).where(and_(*where)).subquery()
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(inner.c.name, inner.c.kind, inner.c.unit, inner.c.service_name,
                   func.max(inner.c.description), func.count(), func.max(inner.c.last_ns))
            .group_by(inner.c.name, inner.c.kind, inner.c.unit, inner.c.service_name)
            .order_by(inner.c.name).limit(MAX_METRICS * 8)).all()
    by_name: dict[str, dict[str, Any]] = {}
    for name, kind, unit, svc, description, n, last_ns in rows:
        entry = by_name.setdefault(name, {"kinds": {}, "units": {}, "services": set(),
                                          "description": "", "series": 0, "last": None})
        entry["kinds"][kind] = entry["kinds"].get(kind, 0) + int(n)
        entry["units"][unit] = entry["units"].get(unit, 0) + int(n)
        entry["services"].add(svc)
        entry["description"] = entry["description"] or description or ""
        entry["series"] += int(n)
        if last_ns is not None:
            entry["last"] = max(int(last_ns), entry["last"] or int(last_ns))
    out = []
    for name, e in list(by_name.items())[:MAX_METRICS]:
        kinds = sorted(e["kinds"], key=lambda k: (-e["kinds"][k], k))
        out.append(MetricInfo(name, kinds[0], max(e["units"], key=lambda u: e["units"][u]),
                              e["description"], sorted(e["services"]), e["series"], e["last"],
                              kinds))
    return out


@dataclass
class _Series:
    key: bytes
    kind: str
    unit: str
    description: str
    reading: str
    service: str
    attributes: dict[str, str]


def _flat(value: Any) -> dict[str, str]:
    return {str(k): attribute_text(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _series(conn: Connection, project_id: int, name: str) -> list[_Series]:
    rows = conn.execute(
        select(_S.c.series_key, _S.c.kind, _S.c.unit, _S.c.description, _S.c.points,
               _S.c.service_name, _S.c.resource_id, cast(_S.c.attributes, Text))
        .where(and_(_S.c.project_id == project_id, _S.c.name == name))
        .order_by(_S.c.series_key)).all()
    resource_ids = sorted({int(r[6]) for r in rows})
    resources: dict[int, dict[str, str]] = {}
    for ids in chunks(resource_ids):
        for rid, text in conn.execute(select(_RES.c.id, cast(_RES.c.attributes, Text))
                                      .where(_RES.c.id.in_(ids))):
            resources[int(rid)] = _flat(load(text))
    return [_Series(bytes(key), kind, unit, description, reading_of(kind, points), service,
                    {**resources.get(int(rid), {}), **_flat(load(attrs))})
            for key, kind, unit, description, points, service, rid, attrs in rows]


def metric_data(store: Store, project_id: int, query: Query) -> MetricData | None:
    """The metric's lines over the range; None when the project has no such metric
    (of that kind). Raises ValueError naming `agg` when the aggregation does not fit."""
    if "\x00" in query.name:  # no stored name holds one (PostgreSQL text cannot)
        return None
    with store.reader.connect() as conn:
        every = _series(conn, project_id, query.name)
        counts: dict[str, int] = {}
        for s in every:
            counts[s.kind] = counts.get(s.kind, 0) + 1
        kinds = sorted(counts, key=lambda k: (-counts[k], k))
        kind = query.kind or (kinds[0] if kinds else None)
        of_kind = [s for s in every if s.kind == kind]
        if not of_kind:
            return None
        readings = [s.reading for s in of_kind]
        reading = max(set(readings), key=lambda r: (readings.count(r), r))
        allowed = AGGREGATIONS[reading]
        aggregation = query.aggregation or allowed[0]
        if aggregation not in allowed:
            raise ValueError(f"'agg' for a {kind} metric read as {reading} must be one of "
                             f"{', '.join(allowed)}")
        services = sorted({s.service for s in of_kind})
        keys_seen = sorted({k for s in of_kind for k in s.attributes})
        matched = [s for s in of_kind if s.reading == reading
                   and (query.service is None or s.service == query.service)
                   and all(s.attributes.get(k) == v for k, v in query.filters.items())]
        read = matched[:MAX_SERIES]
        grouped: dict[str | None, list[bytes]] = {}
        for s in read:
            group = s.attributes.get(query.group_by) if query.group_by else None
            grouped.setdefault(group, []).append(s.key)
        steps = Steps(query.start_ns, query.end_ns, query.step_s)
        lines, points_capped = metric_lines.lines(conn, project_id, steps, reading, aggregation,
                                                  grouped)
        exemplars = _exemplars(conn, project_id, query, grouped)
    main = of_kind[0]
    lines = [g for g in lines if any(v is not None for v in g.values) or any(g.count or ())]
    lines.sort(key=lambda g: (-_weight(g), g.group is None, g.group or ""))
    start_s = query.start_ns // 1_000_000_000
    return MetricData(
        name=query.name, kind=main.kind, unit=main.unit,
        description=next((s.description for s in of_kind if s.description), ""),
        reading=reading, aggregation=aggregation, aggregations=list(allowed), kinds=kinds,
        services=services, attribute_keys=keys_seen, service=query.service,
        filters=dict(query.filters), group_by=query.group_by, step_s=query.step_s,
        t=[start_s + i * query.step_s for i in range(steps.n)], groups=lines[:query.max_groups],
        groups_total=len(lines), max_groups=query.max_groups,
        groups_capped=len(lines) > query.max_groups, series_matched=len(matched),
        series_read=len(read), series_capped=len(matched) > MAX_SERIES,
        points_capped=points_capped, exemplars=exemplars)


def _exemplars(conn: Connection, project_id: int, query: Query,
               grouped: dict[str | None, list[bytes]]) -> list[Exemplar]:
    """The newest MAX_EXEMPLARS exemplars of the grouped series in the query's range.
    Read by the primary key (series, minute): at most 4 rows a series a minute."""
    group_of = {key: group for group, keys in grouped.items() for key in keys}
    first_minute = query.start_ns // 60_000_000_000 * 60
    found: list[Any] = []
    for keys in chunks(sorted(group_of)):
        found += conn.execute(
            select(_E.c.series_key, _E.c.time_ns, _E.c.value, _E.c.trace_id, _E.c.span_id)
            .where(and_(_E.c.project_id == project_id, _E.c.series_key.in_(keys),
                        _E.c.minute >= first_minute, _E.c.minute <= query.end_ns // 1_000_000_000,
                        _E.c.time_ns >= query.start_ns, _E.c.time_ns < query.end_ns))
            .order_by(_E.c.time_ns.desc()).limit(MAX_EXEMPLARS)).all()
    found.sort(key=lambda r: (-int(r[1]), bytes(r[3])))
    return [Exemplar(int(time_ns), None if value is None else float(value),
                     bytes(trace_id).hex(), bytes(span_id).hex(), group_of[bytes(key)])
            for key, time_ns, value, trace_id, span_id in found[:MAX_EXEMPLARS]]


def _weight(group: GroupSeries) -> float:
    if group.count is not None:
        return float(sum(group.count))
    return sum(abs(v) for v in group.values if v is not None)
