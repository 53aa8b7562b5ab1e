"""The before and after windows of every deploy on the deploys page in one statement
(storage/queries/deploys.py's correlate_all): each is performance.window over the
same pieces of the rollups (reads.plan_for), with the same choice of a service's
metric rows when it has any in the window, and the same histograms.

Windows of neighbouring deploys overlap (one's after is the next one's before), so
the pieces are cut where any of them starts or ends and each segment is read once,
summed per service (and bucket); the sums are then added up per window here, where
the metric-or-span choice of each window is made. Tests compare the result with
performance.window on both engines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Select,
    and_,
    func,
    literal,
    or_,
    select,
    true,
    union_all,
)

from model import histogram
from storage.queries import performance as pq
from storage.queries import rollup_reads as reads
from storage.queries.deploy_batch import rows_cte
from storage.queries.latency_cache import CACHE, Totals

# [start_s, end_s), env (None: every env), service (None: every service)
Window = tuple[int, int, str | None, str | None]
_METERED, _TOTALS, _LATENCY = 0, 1, 2  # the kinds of rows the statement returns


def windows(conn: Connection, project_id: int, asked: Sequence[Window]
            ) -> list[pq.WindowStats]:
    """performance.window(start_s, end_s, service, env) for each of `asked`.

    A window's service only picks its rows from the sums per service read anyway:
    the segments stay shared by every window of the environment."""
    plans = [reads.plan_for(lo, hi, hours=True) for lo, hi, _env, _service in asked]
    spans: dict[tuple[reads.Level, str | None], list[tuple[int, int]]] = {}
    for plan, (_lo, _hi, env, _service) in zip(plans, asked, strict=True):
        for piece in plan.pieces:
            if piece.start_s < piece.end_s:
                spans.setdefault((piece.level, env), []).append((piece.start_s, piece.end_s))
    # Segment ids per (level, env): [cut i, cut i+1) that some piece covers (not the
    # gaps between far apart deploys).
    segments: dict[tuple[reads.Level, str | None], list[int]] = {}  # cut points
    seg_rows: dict[reads.Level, list[tuple[int, int, int, str | None]]] = {}
    seg_of: dict[tuple[reads.Level, str | None, int], int] = {}  # (.., start) -> id
    for (level, env), ranges in spans.items():
        points = sorted({p for r in ranges for p in r})
        segments[(level, env)] = points
        for lo, hi in zip(points, points[1:], strict=False):
            if not any(a <= lo and hi <= b for a, b in ranges):
                continue
            seg_of[(level, env, lo)] = len(seg_of)
            seg_rows.setdefault(level, []).append((seg_of[(level, env, lo)], lo, hi, env))
    covering: list[list[tuple[int, bool]]] = []  # per window: (segment, coarse level)
    for plan, (_lo, _hi, env, _service) in zip(plans, asked, strict=True):
        mine = []
        for piece in plan.pieces:
            points = [p for p in segments.get((piece.level, env), [])
                      if piece.start_s <= p < piece.end_s]
            mine += [(seg_of[(piece.level, env, p)], piece.level.coarse) for p in points]
        covering.append(mine)
    metered: dict[int, set[str]] = {}
    totals: dict[int, list[tuple[bool, str, int, int]]] = {}
    hists: dict[tuple[int, bool, str], dict[int, int]] = {}  # (segment, metric, service)
    if seg_rows:
        dialect = conn.dialect.name
        where = {seg: (level.time, env, lo, hi) for level, rows in seg_rows.items()
                 for seg, lo, hi, env in rows}
        base = (str(conn.engine.url), "deploy windows", project_id)
        sums: dict[tuple[int, bool, str], Totals] = {}
        for seg, kind, metric, service, _b, n, e, d in conn.execute(
                _select(project_id, seg_rows, dialect, (_METERED, _TOTALS))):
            if kind == _METERED:
                metered.setdefault(seg, set()).add(service)
            else:
                totals.setdefault(seg, []).append((bool(metric), service, int(n), int(e)))
                sums[(seg, bool(metric), service)] = (int(n), int(e), float(d))
        # Latency rows are read only for segments with a histogram not cached with
        # the totals it has now (storage/queries/latency_cache.py: exact).
        missed: set[int] = set()
        for key, t in sums.items():
            cached = CACHE.get((*base, *where[key[0]], *key[1:]), t)
            if cached is None:
                missed.add(key[0])
            else:
                hists[key] = cached
        if missed:
            read = {level: [r for r in rows if r[0] in missed]
                    for level, rows in seg_rows.items()}
            got: dict[tuple[int, bool, str], dict[int, int]] = {}
            for seg, _k, metric, service, bucket, n, _e, _d in conn.execute(
                    _select(project_id, {k: v for k, v in read.items() if v}, dialect,
                            (_LATENCY,))):
                into = got.setdefault((seg, bool(metric), service), {})
                into[int(bucket)] = int(n)
            for key, t in sums.items():
                if key[0] in missed:
                    hists[key] = got.get(key, {})
                    CACHE.put((*base, *where[key[0]], *key[1:]), t, hists[key])
    out = []
    for plan, (lo, hi, _env, only), mine in zip(plans, asked, covering, strict=True):
        # A service's metric rows count when it has any in the window (any env, as
        # reads.measured): its span and request rows then do not.
        skip = set().union(*(metered.get(seg, set()) for seg, _c in mine))
        count = errors = 0
        hist: dict[int, int] = {}
        for seg, coarse in mine:
            for metric, service, n, e in totals.get(seg, []):
                if (metric or service not in skip) and (only is None or service == only):
                    count, errors = count + n, errors + e
                    for bucket, k in hists.get((seg, metric, service), {}).items():
                        b = histogram.coarse_of(bucket) if plan.coarse and not coarse \
                            else bucket
                        hist[b] = hist.get(b, 0) + k
        out.append(pq.window_stats(plan, lo, hi, count, errors, hist))
    return out


def _select(project_id: int, seg_rows: dict[reads.Level, list[tuple[int, int, int, str | None]]],
            dialect: str, kinds: tuple[int, ...]) -> Select[Any]:
    """Per segment: the services with metric rows in it (any env), and per service the
    sums of the rollups and of the latency rows per bucket, of spans and of metrics.
    On PostgreSQL each segment reads its rows through a LATERAL
    subquery, an index range scan of (project, time) per segment whatever the planner
    guesses of the list (without, on a database without statistics yet, it read the
    project's every row once per segment). SQLite, which has no LATERAL, loops over
    the segments and uses the index by itself."""
    lateral = dialect == "postgresql"
    parts: list[Select[Any]] = []
    for level, rows in seg_rows.items():
        s = rows_cte(f"segments_{level.time}", ("s", "lo", "hi", "env"), rows)
        for kind, metric, table in (
                (_METERED, True, level.metric_r),
                (_TOTALS, False, level.spans_r), (_TOTALS, True, level.metric_r),
                (_LATENCY, False, level.spans_l), (_LATENCY, True, level.metric_r)):
            if kind not in kinds:
                continue
            on = and_(table.c.project_id == project_id, table.c[level.time] >= s.c.lo,
                      table.c[level.time] < s.c.hi)
            if kind != _METERED:
                on = and_(on, or_(s.c.env.is_(None), table.c.env == s.c.env))
            # SQLite reads each segment's rows through a join, PostgreSQL through LATERAL.
            source: FromClause = table if lateral else s.join(table, on)
            bucket = None
            count: ColumnElement[Any] = table.c["count"]
            if kind == _LATENCY:
                source, bucket, count = reads.latency_source(source, table, dialect)
            keys = [table.c.service, *([bucket.label("bucket")] if bucket is not None else [])]
            sums = [func.sum(count).label("n"),
                    *((func.sum(table.c.error_count).label("e"),
                       func.sum(table.c.duration_sum_ms).label("d")) if kind == _TOTALS
                      else (literal(0).label("e"), literal(0.0).label("d")))]
            if kind == _METERED:
                sums = [literal(0).label("n"), literal(0).label("e"), literal(0.0).label("d")]
            if lateral:
                sub = (select(*keys, *sums).select_from(source).where(on).group_by(*keys)
                       .lateral())
                got = select(s.c.s, *sub.c).select_from(s.join(sub, true())).subquery()
            else:
                got = (select(s.c.s, *keys, *sums).select_from(source)
                       .group_by(s.c.s, *keys).subquery())
            parts.append(select(got.c.s, literal(kind).label("kind"),
                                literal(int(metric)).label("metric"), got.c.service,
                                got.c.bucket if kind == _LATENCY
                                else literal(0).label("bucket"), got.c.n, got.c.e, got.c.d))
    return union_all(*parts) if len(parts) > 1 else parts[0]  # type: ignore[return-value]
