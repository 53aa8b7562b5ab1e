"""The metrics part of a group commit: series, points, cumulative-to-delta
conversion with its state in the store, and HTTP server durations into the request
rollups kept for metrics (metric_request_rollups, metric_request_latency).

Conversion (the rules: storage/metric_delta.py) reads and writes the state of each
converted series inside the commit's transaction. On PostgreSQL the state rows are
locked (a row is first made, empty, for a new series, so there is one to lock), in
key order: two collectors behind one load balancer take turns per series, and
neither counts an interval twice nor loses one. SQLite has one writer.

A point that feeds the rollups is inserted alone with RETURNING: only a point
stored now (not one re-sent) is counted. Every other point is inserted ON CONFLICT
DO NOTHING: a re-sent point is stored once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from sounding import histogram
from storage import metric_delta, rows
from storage.rows import Row, WireBatch
from storage.writer_groups import RollupKey, upsert_rollups

SERIES, POINTS = rows.METRIC_SERIES.table, rows.METRIC_POINTS.table
STATE = rows.METRIC_CUMULATIVE
ROLLUPS, LATENCY = rows.METRIC_REQUEST_ROLLUPS, rows.METRIC_REQUEST_LATENCY
SERIES_COLUMNS = ("project_id", *rows.METRIC_SERIES.names, "received_us")
POINT_FIELDS = tuple(f for f in rows.METRIC_POINTS.names)
POINT_COLUMNS = ("project_id", *POINT_FIELDS, "received_us")
_POINT = rows.METRIC_WIRE.getter(*POINT_FIELDS)
_META = rows.METRIC_WIRE.getter("cumulative", "kind", "to_ms")
_REQUEST = rows.METRIC_WIRE.getter("service", "env", "method", "route", "status")
_KEY, _TIME = (rows.METRIC_WIRE.position(name) for name in ("series_key", "time_ns"))
_START, _VALUE = (POINT_FIELDS.index(name) for name in ("start_ns", "value"))
_COUNT, _SUM, _MIN, _MAX, _BUCKETS = (
    POINT_FIELDS.index(name) for name in ("count", "sum", "min", "max", "buckets"))
SERVER_ERROR = 500
IN_CHUNK = 500
StateKey = tuple[int, bytes]


def _q(dialect: str) -> str:
    return "%s" if dialect == "postgresql" else "?"


def _sql(dialect: str, table: str, columns: Sequence[str], suffix: str) -> str:
    q = _q(dialect)
    return (f'INSERT INTO "{table}" ({", ".join(columns)}) '
            f'VALUES ({", ".join([q] * len(columns))}) {suffix}')


class MetricsWriter:
    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.series_sql = _sql(dialect, SERIES, SERIES_COLUMNS, "ON CONFLICT DO NOTHING")
        self.points_sql = _sql(dialect, POINTS, POINT_COLUMNS, "ON CONFLICT DO NOTHING")
        self.counted_sql = _sql(dialect, POINTS, POINT_COLUMNS,
                                "ON CONFLICT DO NOTHING RETURNING time_ns")
        q = _q(dialect)
        self.new_state_sql = (f'INSERT INTO "{STATE}" (project_id, series_key, start_ns, '
                              f"time_ns, state) VALUES ({q}, {q}, 0, -1, '{{}}') "
                              "ON CONFLICT DO NOTHING")
        self.save_state_sql = (f'UPDATE "{STATE}" SET start_ns = {q}, time_ns = {q}, '
                               f"state = {q} WHERE project_id = {q} AND series_key = {q}")
        self.lock = " FOR UPDATE" if dialect == "postgresql" else ""

    def write(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        series = sorted({(b.project_id, *s, received_us) for b in batches
                         for s in b.metric_series})
        if series:
            cursor.executemany(self.series_sql, series)
        points = [(b.project_id, p) for b in batches for p in b.metrics]
        if not points:
            return
        cumulative = [(project_id, p) for project_id, p in points if _META(p)[0]]
        stored: list[tuple[int, Row, tuple[Any, ...]]] = []  # (project, wire row, stored row)
        for project_id, p in points:
            if not _META(p)[0]:
                stored.append((project_id, p, _POINT(p)))
        if cumulative:
            stored += self._deltas(cursor, cumulative)
        plain = [(project_id, *values, received_us) for project_id, p, values in stored
                 if not _META(p)[2]]
        if plain:
            cursor.executemany(self.points_sql, plain)
        counted = []
        for project_id, p, values in sorted((s for s in stored if _META(s[1])[2]),
                                            key=lambda s: (s[0], s[2][0], s[2][1])):
            cursor.execute(self.counted_sql, (project_id, *values, received_us))
            if cursor.fetchone() is not None:
                counted.append((project_id, p, values))
        if counted:
            self._rollups(cursor, counted)

    # --- cumulative to delta ---------------------------------------------------

    def _states(self, cursor: Any, keys: list[StateKey]) -> dict[StateKey, Any]:
        cursor.executemany(self.new_state_sql, keys)
        q = _q(self.dialect)
        found: dict[StateKey, Any] = {}
        by_project: dict[int, list[bytes]] = {}
        for project_id, key in keys:
            by_project.setdefault(project_id, []).append(key)
        for project_id, series_keys in sorted(by_project.items()):
            for i in range(0, len(series_keys), IN_CHUNK):
                chunk = series_keys[i:i + IN_CHUNK]
                cursor.execute(
                    f'SELECT series_key, start_ns, time_ns, state FROM "{STATE}" '
                    f"WHERE project_id = {q} AND series_key IN ({', '.join([q] * len(chunk))}) "
                    f"ORDER BY series_key{self.lock}", (project_id, *chunk))
                for key, start_ns, time_ns, state in cursor.fetchall():
                    found[(project_id, bytes(key))] = (
                        None if time_ns < 0 else (start_ns, time_ns, json.loads(state)))
        return found

    def _deltas(self, cursor: Any, points: list[tuple[int, Row]]
                ) -> list[tuple[int, Row, tuple[Any, ...]]]:
        # Per series, oldest first: several points of one series in one commit follow
        # one another.
        points.sort(key=lambda item: (item[0], item[1][_KEY], item[1][_TIME]))
        keys = sorted({(project_id, p[_KEY]) for project_id, p in points})
        states = self._states(cursor, keys)
        out = []
        changed: dict[StateKey, tuple[int, int, str]] = {}
        for project_id, p in points:
            skey = (project_id, p[_KEY])
            values = list(_POINT(p))
            kind = _META(p)[1]
            cumulative = _cumulative(kind, values)
            try:
                found = metric_delta.delta(kind, values[_START], p[_TIME], cumulative,
                                           states.get(skey))
            except metric_delta.Skip:
                continue
            states[skey] = (values[_START], p[_TIME], cumulative)
            changed[skey] = (values[_START], p[_TIME], json.dumps(cumulative))
            if found is None:
                continue
            start_ns, diff, whole = found
            values[_START] = start_ns
            if not whole:
                _apply(kind, values, diff)
            out.append((project_id, p, tuple(values)))
        if changed:
            cursor.executemany(self.save_state_sql,
                               [(start, time_ns, text, project_id, key)
                                for (project_id, key), (start, time_ns, text)
                                in sorted(changed.items())])
        return out

    # --- HTTP server durations into request rollups -------------------------------

    def _rollups(self, cursor: Any, points: list[tuple[int, Row, tuple[Any, ...]]]) -> None:
        rollups: dict[RollupKey, list[Any]] = {}
        buckets: dict[tuple[RollupKey, int], int] = {}
        for project_id, p, values in points:
            to_ms = _META(p)[2]
            service, env, method, route, status = _REQUEST(p)
            key: RollupKey = (project_id, service, env, method, route,
                              p[_TIME] // 60_000_000_000 * 60)
            spread = sounding_buckets(_META(p)[1], values, to_ms)
            count = sum(spread.values())
            if not count:
                continue
            total = values[_SUM]
            total_ms = (total * to_ms if total is not None
                        else sum(histogram.bucket_value(b) * n for b, n in spread.items()))
            agg = rollups.get(key)
            if agg is None:
                agg = rollups[key] = [0, 0, 0.0]
            agg[0] += count
            agg[1] += count if status >= SERVER_ERROR else 0
            agg[2] += total_ms
            for bucket, n in spread.items():
                buckets[(key, bucket)] = buckets.get((key, bucket), 0) + n
        upsert_rollups(cursor, self.dialect, rollups, buckets, ROLLUPS, LATENCY)


def _cumulative(kind: str, values: list[Any]) -> dict[str, Any]:
    if kind == "sum":
        return {"value": values[_VALUE]}
    return {"count": values[_COUNT], "sum": values[_SUM],
            "buckets": json.loads(values[_BUCKETS])}


def _apply(kind: str, values: list[Any], diff: dict[str, Any]) -> None:
    """The stored row's values set to the delta. The min and max of a cumulative
    histogram are over its whole time: they say nothing of the delta's, so unset."""
    if kind == "sum":
        values[_VALUE] = diff["value"]
        return
    values[_COUNT], values[_SUM] = diff["count"], diff["sum"]
    values[_MIN] = values[_MAX] = None
    values[_BUCKETS] = json.dumps(diff["buckets"], separators=(",", ":"))


def sounding_buckets(kind: str, values: Sequence[Any], to_ms: float) -> dict[int, int]:
    """A stored histogram point's counts in Sounding's latency buckets
    (sounding/histogram.py). The counts of an OTLP bucket go to the bucket of its
    upper bound (its lower bound for the last, unbounded one, or the max when known),
    kept within the point's min and max when known: a quantile read from them is
    within the OTLP histogram's own resolution."""
    out: dict[int, int] = {}
    if not values[_BUCKETS]:
        return out
    data = json.loads(values[_BUCKETS])
    low, high = values[_MIN], values[_MAX]

    def add(upper: float, n: int) -> None:
        if n <= 0:
            return
        if high is not None:
            upper = min(upper, high)
        if low is not None:
            upper = max(upper, low)
        if not math.isfinite(upper):
            upper = 1e300  # past any duration, still a bucket
        bucket = histogram.bucket_of(max(upper, 0.0) * to_ms)
        out[bucket] = out.get(bucket, 0) + n

    if kind == "histogram":
        bounds, counts = data.get("bounds") or [], data.get("counts") or []
        if not bounds:  # one bucket: all values in (-inf, +inf)
            if counts:
                add(high if high is not None else (values[_SUM] or 0.0)
                    / max(values[_COUNT], 1), counts[0])
            return out
        for i, n in enumerate(counts):
            if i < len(bounds):
                add(bounds[i], n)
            else:
                add(high if high is not None else bounds[-1], n)
        return out
    if kind == "exponential_histogram":
        base_exp = 2.0 ** -data["scale"]
        add(0.0, data["zero_count"])
        add(0.0, sum(data["negative"]["counts"]))
        offset = data["positive"]["offset"]
        for i, n in enumerate(data["positive"]["counts"]):
            try:
                upper = 2.0 ** ((offset + i + 1) * base_exp)
            except OverflowError:
                upper = math.inf
            add(upper, n)
    return out
