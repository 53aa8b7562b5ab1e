"""How the performance queries (storage/queries/performance.py) read the request
rollups: which tables a range is read from (whole hours from the hourly rollups when
it is long, minutes otherwise and at its ends), the rows that count (a service's
metric rollups when it has any in the range, its span and request rollups
otherwise), and the latency histograms per block of time, cached while the block's
totals are unchanged (storage/queries/latency_cache.py).

The latency buckets of the rollups of requests and spans are rows of their own;
those of the metric-fed rollups are in the rollup row, a JSON object of counts by
bucket (storage/writer/rollups.py), read as rows by `latency_source`.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    ColumnElement,
    CompoundSelect,
    Connection,
    FromClause,
    Integer,
    Select,
    Subquery,
    Table,
    and_,
    cast,
    func,
    literal,
    select,
    true,
    union,
    union_all,
)

from model import histogram
from storage import schema
from storage.queries.latency_cache import CACHE
from storage.store import Store


@dataclass(frozen=True)
class Level:
    """One granularity of the rollups: its two pairs of tables and their time column."""

    spans_r: Table
    spans_l: Table
    metric_r: Table
    time: str
    coarse: bool  # latency buckets of histogram.coarse_of


_MINUTES = Level(schema.request_rollups, schema.request_latency,
                 schema.metric_request_rollups, "minute", False)
_HOURS = Level(schema.request_rollups_hourly, schema.request_latency_hourly,
               schema.metric_request_rollups_hourly, "hour", True)
# Ranges longer than this read their whole hours from the hourly rollups, whose
# quantiles are within histogram.COARSE_ACCURACY (5%); counts are exact either way.
LONG_RANGE_S = 6 * 3600
HOUR = 3600


@dataclass(frozen=True)
class Piece:
    level: Level
    start_s: int
    end_s: int


@dataclass(frozen=True)
class Plan:
    """Where a range is read from: whole hours from the hourly rollups and the minutes
    at either end from the per-minute ones, or every minute from those."""

    pieces: list[Piece]

    @property
    def coarse(self) -> bool:
        return any(p.level.coarse for p in self.pieces)

    @property
    def accuracy(self) -> float:
        return histogram.COARSE_ACCURACY if self.coarse else histogram.ACCURACY

    def quantile(self, hist: dict[int, int], q: float) -> float | None:
        value = histogram.coarse_value if self.coarse else histogram.bucket_value
        return histogram.quantile(hist, q, value)


def plan_for(start_s: int, end_s: int, hours: bool) -> Plan:
    first, last = -(-start_s // HOUR) * HOUR, end_s // HOUR * HOUR
    if not hours or end_s - start_s <= LONG_RANGE_S or last <= first:
        return Plan([Piece(_MINUTES, start_s, end_s)])
    edges = [Piece(_MINUTES, a, b) for a, b in ((start_s, first), (last, end_s)) if a < b]
    return Plan([Piece(_HOURS, first, last), *edges])


def where(table: FromClause, time: str, project_id: int, start_s: int, end_s: int,
          service: str | None = None, env: str | None = None, method: str | None = None,
          route: str | None = None) -> ColumnElement[bool]:
    """None means any; the rollups store a missing service or env as ''."""
    clauses = [table.c.project_id == project_id, table.c[time] >= start_s,
               table.c[time] < end_s]
    for column, value in (("service", service), ("env", env), ("method", method),
                          ("route", route)):
        if value is not None:
            clauses.append(table.c[column] == value)
    return and_(*clauses)


def measured(plan: Plan, project_id: int) -> Select[Any] | CompoundSelect:
    """The services with metric rollups anywhere in the plan's range."""
    selects = [select(p.level.metric_r.c.service)
               .where(where(p.level.metric_r, p.level.time, project_id, p.start_s, p.end_s))
               for p in plan.pieces]
    return union(*selects) if len(selects) > 1 else selects[0].distinct()


_ROLLUP_VALUES = ("count", "error_count", "duration_sum_ms")


def latency_source(source: FromClause, table: Table, dialect: str
                   ) -> tuple[FromClause, ColumnElement[Any], ColumnElement[Any]]:
    """What reads `table`'s latency buckets as rows: `source` (a FROM holding `table`,
    a latency table or a metric-fed rollups table) with, for the latter, its buckets'
    JSON spread into a row per bucket, and the bucket and count columns."""
    if "bucket" in table.c:
        return source, table.c.bucket, table.c["count"]
    spread = (func.json_each_text(cast(table.c.buckets, JSON)) if dialect == "postgresql"
              else func.json_each(table.c.buckets)).table_valued("key", "value")
    return (source.join(spread, true()), cast(spread.c.key, Integer),
            cast(spread.c.value, BigInteger))


def rows(plan: Plan, pieces: list[Piece], latency: bool, project_id: int, dialect: str,
         **match: str | None) -> Subquery:
    """The rows of the pieces that count, rollups or latency (`bucket`, `count`), with
    the time as `t` and `coarse` 1 for coarse buckets: a service's metric rows when it
    has any in the plan's range, its other rows otherwise. One statement for every
    piece."""
    metered = measured(plan, project_id)
    parts: list[Select[Any]] = []
    for piece in pieces:
        level = piece.level
        spans = level.spans_l if latency else level.spans_r
        for table in (spans, level.metric_r):
            source: FromClause = table
            values: list[ColumnElement[Any]]
            if latency:
                source, bucket, count = latency_source(table, table, dialect)
                values = [bucket.label("bucket"), count.label("count")]
            else:
                values = [table.c[v] for v in _ROLLUP_VALUES]
            part = select(table.c.service, table.c.env, table.c.method, table.c.route,
                          table.c[level.time].label("t"),
                          literal(int(level.coarse)).label("coarse"),
                          *values).select_from(source).where(
                where(table, level.time, project_id, piece.start_s, piece.end_s, **match))
            parts.append(part.where(table.c.service.not_in(metered)) if table is spans
                         else part)
    return union_all(*parts).subquery()


Block = tuple[Any, ...]  # (group values..., block index)


def read(conn: Connection, store: Store, plan: Plan, project_id: int,
         match: dict[str, str | None], group: tuple[str, ...], origin: int, block_s: int
         ) -> tuple[dict[Block, list[Any]], dict[Block, dict[int, int]]]:
    """The range's totals ([count, error count, duration sum]) and latency histograms
    per group and block of time (block i: [origin + i*block_s, origin + (i+1)*block_s);
    no block holds parts of two pieces of the plan). Histograms of blocks whose totals
    are those they were read with come from the cache
    (storage/queries/latency_cache.py); latency rows are read only for the others."""
    dialect = conn.dialect.name
    r = rows(plan, plan.pieces, False, project_id, dialect, **match)
    block = ((r.c.t - origin) // literal(block_s)).label("block")
    totals: dict[Block, list[Any]] = {}
    for row in conn.execute(
            select(*(r.c[g] for g in group), block, func.sum(r.c.count),
                   func.sum(r.c.error_count), func.sum(r.c.duration_sum_ms))
            .group_by(*(r.c[g] for g in group), block)):
        totals[tuple(row[:-3])] = [int(row[-3]), int(row[-2]), float(row[-1])]
    start_s = min(p.start_s for p in plan.pieces)
    end_s = max(p.end_s for p in plan.pieces)
    base = (store.url, plan.coarse, project_id,
            tuple(sorted((k, v) for k, v in match.items() if v is not None)))

    def key(b: Block) -> Hashable:  # the group and the part of the block in the range
        lo = origin + b[-1] * block_s
        return (*base, b[:-1], max(start_s, lo), min(end_s, lo + block_s))

    hists: dict[Block, dict[int, int]] = {}
    missed: list[int] = []
    for b, (c, e, d) in totals.items():
        cached = CACHE.get(key(b), (c, e, d))
        if cached is None:
            missed.append(b[-1])
        else:
            hists[b] = cached
    if not missed:
        return totals, hists
    lo = origin + min(missed) * block_s
    hi = origin + (max(missed) + 1) * block_s
    pieces = [Piece(p.level, max(p.start_s, lo), min(p.end_s, hi)) for p in plan.pieces
              if p.start_s < hi and lo < p.end_s]
    lat = rows(plan, pieces, True, project_id, dialect, **match)
    lblock = ((lat.c.t - origin) // literal(block_s)).label("block")
    read: dict[Block, dict[int, int]] = {}
    coarsen = plan.coarse
    for row in conn.execute(
            select(*(lat.c[g] for g in group), lblock, lat.c.coarse, lat.c.bucket,
                   func.sum(lat.c.count))
            .group_by(*(lat.c[g] for g in group), lblock, lat.c.coarse, lat.c.bucket)):
        hist = read.setdefault(tuple(row[:-3]), {})
        bucket = histogram.coarse_of(row[-2]) if coarsen and not row[-3] else int(row[-2])
        hist[bucket] = hist.get(bucket, 0) + int(row[-1])
    for b, (c, e, d) in totals.items():
        if min(missed) <= b[-1] <= max(missed):  # read whole: [lo, hi) holds its part
            hists[b] = read.get(b, {})
            CACHE.put(key(b), (c, e, d), hists[b])
    return totals, hists


