"""The metrics part of a group commit: series, points, cumulative-to-delta
conversion with its state in the store, and HTTP server durations into the request
rollups kept for metrics (metric_request_rollups and its hourly table, whose rows hold
their latency buckets: storage/writer/rollups.py).

Conversion (the rules: storage/writer/metric_delta.py) reads and writes the state of each
converted series inside the commit's transaction. On PostgreSQL the state rows are
locked (a row is first made, empty, for a new series, so there is one to lock), in
key order: two collectors behind one load balancer take turns per series, and
neither counts an interval twice nor loses one. SQLite has one writer at a time: the
writer keeps the states it committed in memory (metric_states.py) and reads from the
store only those it does not have, as long as no other connection has committed to
the file since its own last commit (PRAGMA data_version; another collector on the
same file, or a tool); the store stays the truth, written in every commit.

A converted point is new by the rules (a re-sent one is skipped by its state). A
delta point that feeds the rollups is inserted alone with RETURNING: only a point
stored now (not one re-sent) is counted. Every other point is inserted ON CONFLICT
DO NOTHING: a re-sent point is stored once.

Series rows never change once written: the writer remembers the keys it committed
(`committed`, called after each commit) and does not insert them again.

Exemplars are inserted ON CONFLICT DO NOTHING into the slot their trace id chose
(storage/rows.py's METRIC_EXEMPLARS): a full slot keeps its first exemplar, so a
series holds at most MAX_EXEMPLARS a minute with no read; a commit without any
skips them with one test per batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain
from typing import Any

import orjson

from model import histogram
from storage import rows
from storage.rows import Row, WireBatch
from storage.writer import metric_delta
from storage.writer.copy import StagedTable, Staging, upsert_rows
from storage.writer.groups import RollupKey, upsert_rollups
from storage.writer.metric_buckets import explicit_targets, sounding_buckets
from storage.writer.metric_states import MAX_KNOWN_SERIES, StateCache, StateKey
from storage.writer.placeholders import mark, marks

SERIES, POINTS = rows.METRIC_SERIES.table, rows.METRIC_POINTS.table
STATE = rows.METRIC_CUMULATIVE
ROLLUPS = rows.METRIC_REQUEST_ROLLUPS
SERIES_COLUMNS = ("project_id", *rows.METRIC_SERIES.names, "received_us")
EXEMPLAR_COLUMNS = ("project_id", *rows.METRIC_EXEMPLARS.names)
POINT_FIELDS = tuple(f for f in rows.METRIC_POINTS.names)
POINT_COLUMNS = ("project_id", *POINT_FIELDS, "received_us")
_POINT = rows.METRIC_WIRE.getter(*POINT_FIELDS)
_META = rows.METRIC_WIRE.getter("cumulative", "kind", "to_ms")
_KIND, _TO_MS = rows.METRIC_WIRE.getter("kind"), rows.METRIC_WIRE.getter("to_ms")
# The min and max of a point as it came: for a delta converted from a cumulative
# point, those of the cumulative point (see _apply).
_RANGE = rows.METRIC_WIRE.getter("min", "max")
_REQUEST = rows.METRIC_WIRE.getter("service", "env", "method", "route", "status")
_KEY, _TIME = (rows.METRIC_WIRE.position(name) for name in ("series_key", "time_ns"))
_START, _VALUE = (POINT_FIELDS.index(name) for name in ("start_ns", "value"))
_COUNT, _SUM, _MIN, _MAX, _BUCKETS = (
    POINT_FIELDS.index(name) for name in ("count", "sum", "min", "max", "buckets"))
SERVER_ERROR = 500
IN_CHUNK = 500
ROWS_A_STEP = 32
Stored = tuple[int, Row, tuple[Any, ...], Any]


def _sql(dialect: str, table: str, columns: Sequence[str], suffix: str) -> str:
    return (f'INSERT INTO "{table}" ({", ".join(columns)}) '
            f'VALUES ({marks(dialect, len(columns))}) {suffix}')


_STATE_COLUMNS = ("project_id", "series_key", "start_ns", "time_ns", "state")
_STATE_TYPES = ("int4", "bytea", "int8", "int8", "text")


class MetricsWriter:
    def __init__(self, dialect: str, staging: Staging | None = None) -> None:
        self.dialect = dialect
        # PostgreSQL: series and points by COPY and staged inserts (storage/writer/copy.py).
        self.staging = staging if dialect == "postgresql" else None
        self.staged_series = StagedTable(rows.METRIC_SERIES, SERIES_COLUMNS,
                                         ("project_id", "series_key"))
        self.staged_points = StagedTable(rows.METRIC_POINTS, POINT_COLUMNS,
                                         ("project_id", "series_key", "time_ns"),
                                         copy_first=True)
        self.staged_counted = StagedTable(rows.METRIC_POINTS, POINT_COLUMNS,
                                          ("project_id", "series_key", "time_ns"),
                                          returning=("project_id", "series_key", "time_ns"))
        self.series_sql = _sql(dialect, SERIES, SERIES_COLUMNS, "ON CONFLICT DO NOTHING")
        self.points_sql = _sql(dialect, POINTS, POINT_COLUMNS, "ON CONFLICT DO NOTHING")
        self.exemplars_sql = _sql(dialect, rows.METRIC_EXEMPLARS.table, EXEMPLAR_COLUMNS,
                                  "ON CONFLICT DO NOTHING")
        # SQLite: ROWS_A_STEP points a statement, stepped once for them all.
        row = f"({marks(dialect, len(POINT_COLUMNS))})"
        self.points_rows_sql = (f'INSERT INTO "{POINTS}" ({", ".join(POINT_COLUMNS)}) VALUES '
                                f'{", ".join([row] * ROWS_A_STEP)} ON CONFLICT DO NOTHING')
        self.counted_sql = _sql(dialect, POINTS, POINT_COLUMNS,
                                "ON CONFLICT DO NOTHING RETURNING time_ns")
        # PostgreSQL: lock each series' state row, made first if new, so that two
        # collectors take turns. SQLite: one writer at a time holds the database.
        self.lock = dialect == "postgresql"
        self.known: set[tuple[int, bytes]] = set()
        self.pending: list[tuple[int, bytes]] = []
        self.cache = StateCache() if dialect == "sqlite" else None

    def committed(self) -> None:
        """The last `write` was committed: its series exist, its states are the store's."""
        if len(self.known) + len(self.pending) > MAX_KNOWN_SERIES:
            self.known.clear()
        self.known.update(self.pending)
        self.pending = []
        if self.cache is not None:
            self.cache.committed()

    def write(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        if self.cache is not None:
            self.cache.pending, self.cache.seen = {}, None
        known = self.known
        series = sorted({(b.project_id, *s, received_us) for b in batches
                         for s in b.metric_series if (b.project_id, s[0]) not in known})
        self.pending = [(row[0], row[1]) for row in series]
        if series and self.staging is not None:
            self.staging.insert(cursor, self.staged_series, series)
        elif series:
            cursor.executemany(self.series_sql, series)
        # Sorted: two collectors' commits meet the same keys in one order.
        exemplars = sorted((b.project_id, *e) for b in batches if b.metric_exemplars
                           for e in b.metric_exemplars)
        if exemplars:
            cursor.executemany(self.exemplars_sql, exemplars)
        # Each point read once: cumulative ones to convert, delta request durations
        # to insert alone (to count only those stored now), the rest inserted as is.
        cumulative: list[tuple[int, Row]] = []
        requests: list[Stored] = []
        plain: list[Row] = []
        for b in batches:
            project_id = b.project_id
            for p in b.metrics:
                is_cumulative, _, to_ms = _META(p)
                if is_cumulative:
                    cumulative.append((project_id, p))
                elif to_ms:
                    requests.append((project_id, p, _POINT(p), None))
                else:
                    plain.append((project_id, *_POINT(p), received_us))
        # (project, wire row, stored row, its buckets parsed when they were)
        converted = self._deltas(cursor, cumulative) if cumulative else []
        counted = [s for s in converted if _TO_MS(s[1])]
        plain += [(s[0], *s[2], received_us) for s in converted if not _TO_MS(s[1])]
        if self.staging is not None:
            # Converted points are new (the state skips what was counted), inserted
            # with the plain ones; a delta point is counted only if this insert stored it.
            plain += [(project_id, *values, received_us)
                      for project_id, _, values, _ in counted]
            if plain:
                self.staging.insert(cursor, self.staged_points, plain)
            counted += self._insert_counted(cursor, requests, received_us)
            if counted:
                self._rollups(cursor, counted)
            return
        self._insert_points(cursor, plain)
        # Converted points are new (the state skips what was counted); a delta point
        # is counted only if this insert stored it.
        delta_counted = []
        for project_id, p, values, parsed in sorted(
                requests, key=lambda s: (s[0], s[2][0], s[2][1])):
            cursor.execute(self.counted_sql, (project_id, *values, received_us))
            if cursor.fetchone() is not None:
                delta_counted.append((project_id, p, values, parsed))
        self._insert_points(cursor, [(project_id, *values, received_us)
                                     for project_id, _, values, _ in counted])
        counted += delta_counted
        if counted:
            self._rollups(cursor, counted)

    def _insert_points(self, cursor: Any, points: list[Row]) -> None:
        """SQLite: insert `points` (ON CONFLICT DO NOTHING), ROWS_A_STEP a statement
        and the rest one by one. A statement started, bound and ended once for
        ROWS_A_STEP points rather than for each cut the writer's instructions per
        metric point by 8% (callgrind, bench/RESULTS.md, issue 23 evening). One fixed
        size, so that the statement is prepared once."""
        whole = len(points) - len(points) % ROWS_A_STEP
        if whole:
            cursor.executemany(self.points_rows_sql, [
                list(chain.from_iterable(points[i:i + ROWS_A_STEP]))
                for i in range(0, whole, ROWS_A_STEP)])
        if whole < len(points):
            cursor.executemany(self.points_sql, points[whole:])

    def _insert_counted(self, cursor: Any, requests: list[Stored], received_us: int
                        ) -> list[Stored]:
        """PostgreSQL: insert the delta request points in one staged insert; those it
        stored (the first of a key sent twice in this commit), to be counted."""
        if not requests or self.staging is None:
            return []
        first: dict[tuple[int, bytes, int], Stored] = {}
        for stored in requests:
            first.setdefault((stored[0], bytes(stored[2][0]), stored[2][1]), stored)
        inserted = self.staging.insert(cursor, self.staged_counted, [
            (project_id, *values, received_us) for project_id, _, values, _ in first.values()])
        return [first[(int(project_id), bytes(key), int(time_ns))]
                for project_id, key, time_ns in sorted(inserted)]

    # --- cumulative to delta ---------------------------------------------------

    def _states(self, cursor: Any, kinds: dict[StateKey, str]) -> dict[StateKey, Any]:
        """The state of each series in `kinds` (its kind), None for one without."""
        # PostgreSQL locks them in key order; SQLite has one writer: any order.
        keys = sorted(kinds) if self.lock else list(kinds)
        if self.lock:
            upsert_rows(cursor, self.dialect, STATE, _STATE_COLUMNS, _STATE_TYPES,
                        "ON CONFLICT DO NOTHING",
                        [(project_id, key, 0, -1, "{}") for project_id, key in keys])
        q = mark(self.dialect)
        found: dict[StateKey, Any] = {}
        if self.cache is not None:
            keys = self.cache.take(cursor, keys, found)
        by_project: dict[int, list[bytes]] = {}
        for project_id, key in keys:
            by_project.setdefault(project_id, []).append(key)
        for project_id, series_keys in sorted(by_project.items()):
            for i in range(0, len(series_keys), IN_CHUNK):
                chunk = series_keys[i:i + IN_CHUNK]
                cursor.execute(
                    f'SELECT series_key, start_ns, time_ns, state FROM "{STATE}" '
                    f"WHERE project_id = {q} AND series_key IN ({', '.join([q] * len(chunk))}) "
                    f"ORDER BY series_key{' FOR UPDATE' if self.lock else ''}",
                    (project_id, *chunk))
                for key, start_ns, time_ns, state in cursor.fetchall():
                    skey = (project_id, bytes(key))
                    found[skey] = None if time_ns < 0 else (
                        start_ns, time_ns, metric_delta.from_json(kinds[skey], orjson.loads(state)))
        return found

    def _deltas(self, cursor: Any, points: list[tuple[int, Row]]) -> list[Stored]:
        kinds = {(project_id, p[_KEY]): _KIND(p) for project_id, p in points}
        if len(kinds) < len(points):
            # Several points of a series in one commit: oldest first, each the next's state.
            points.sort(key=_point_time)
        states = self._states(cursor, kinds)
        out: list[Stored] = []
        changed: dict[StateKey, tuple[str, tuple[Any, ...]]] = {}
        for project_id, p in points:
            skey = (project_id, p[_KEY])
            values = _POINT(p)
            kind = kinds[skey]
            cumulative = _cumulative(kind, values)
            if cumulative is None:
                # A sum without a finite value (NaN or an infinity, stored as null)
                # counts nothing: stored as it came, the state left for the next point.
                out.append((project_id, p, values, None))
                continue
            try:
                found = metric_delta.delta(kind, values[_START], p[_TIME], cumulative,
                                           states.get(skey))
            except metric_delta.Skip:
                continue
            states[skey] = (values[_START], p[_TIME], cumulative)
            changed[skey] = (kind, values)  # its state text made once, for the last
            if found is None:
                continue
            start_ns, diff, whole = found
            if whole:  # stored as it came, its start included
                diff = cumulative
            else:
                delta_values = list(values)
                delta_values[_START] = start_ns
                _apply(kind, delta_values, diff)
                values = tuple(delta_values)
            out.append((project_id, p, values, _buckets(kind, diff) if _TO_MS(p) else None))
        if self.cache is not None:  # every state of this write, read or changed
            self.cache.pending = states
        if changed:
            upsert_rows(cursor, self.dialect, STATE, _STATE_COLUMNS, _STATE_TYPES,
                        "ON CONFLICT (project_id, series_key) DO UPDATE SET "
                        "start_ns = excluded.start_ns, time_ns = excluded.time_ns, "
                        "state = excluded.state", [
                            (skey[0], skey[1], states[skey][0], states[skey][1],
                             _state_text(kind, values))
                            for skey, (kind, values) in (
                                sorted(changed.items()) if self.lock else changed.items())])
        return out

    # --- HTTP server durations into request rollups -------------------------------

    def _rollups(self, cursor: Any, points: list[Stored]) -> None:
        rollups: dict[RollupKey, list[Any]] = {}
        buckets: dict[tuple[RollupKey, int], int] = {}
        # Explicit histograms: counts added up bucket by bucket per (key, Sounding
        # bucket of each), and only then spread into Sounding's buckets.
        vectors: dict[tuple[RollupKey, tuple[int, ...]], list[int]] = {}
        for project_id, p, values, parsed in points:
            to_ms = _TO_MS(p)
            service, env, method, route, status = _REQUEST(p)
            key: RollupKey = (project_id, service, env, method, route,
                              p[_TIME] // 60_000_000_000 * 60)
            kind = _KIND(p)
            if parsed is None and values[_BUCKETS]:
                parsed = orjson.loads(values[_BUCKETS])
            low, high = _RANGE(p)
            explicit = explicit_targets(kind, parsed, to_ms, low, high)
            total = values[_SUM]
            if explicit is not None and total is not None:
                targets, counts = explicit
                count = sum(counts)
                if not count or not _plausible(count, total * to_ms):
                    continue
                total_ms = total * to_ms
                vector = vectors.get((key, targets))
                vectors[(key, targets)] = (list(counts) if vector is None else
                                           [a + b for a, b in zip(vector, counts, strict=True)])
            else:
                spread = sounding_buckets(kind, values, to_ms, low, high, parsed)
                count = sum(spread.values())
                if not count:
                    continue
                total_ms = (total * to_ms if total is not None
                            else sum(histogram.bucket_value(b) * n for b, n in spread.items()))
                if not _plausible(count, total_ms):
                    continue
                for bucket, n in spread.items():
                    buckets[(key, bucket)] = buckets.get((key, bucket), 0) + n
            agg = rollups.get(key)
            if agg is None:
                agg = rollups[key] = [0, 0, 0.0]
            agg[0] += count
            agg[1] += count if status >= SERVER_ERROR else 0
            agg[2] += total_ms
        for (key, targets), counts in vectors.items():
            for bucket, n in zip(targets, counts, strict=True):
                if n:
                    buckets[(key, bucket)] = buckets.get((key, bucket), 0) + n
        upsert_rollups(cursor, self.dialect, rollups, buckets, ROLLUPS, None)


# The most requests one point may add to the request rollups. A point is stored
# whatever its count (within 64 bits), but one claiming more requests than this in
# one interval measures no server: its counts would overflow the rollups' 64-bit
# counters after a few such points (PostgreSQL then refused every later commit that
# touched the row, for good). At this bound, a row of one minute or one hour would
# need billions of such points to overflow.
MAX_POINT_REQUESTS = 2**32


def _plausible(count: int, total_ms: float) -> bool:
    """Whether a point's requests go into the rollups (see MAX_POINT_REQUESTS); a
    duration total that is not finite (a sum past float range) is left out too."""
    return count <= MAX_POINT_REQUESTS and math.isfinite(total_ms)


def _point_time(item: tuple[int, Row]) -> int:
    return item[1][_TIME]


def _number(value: float | None) -> str:
    """A finite float or None as JSON (the wire form has no other), as orjson writes
    it: a few times cheaper than repr."""
    return "null" if value is None else orjson.dumps(value).decode()


def _state_text(kind: str, values: Sequence[Any]) -> str:
    """The state column of a cumulative point, its buckets' JSON text as it came."""
    if kind == "sum":
        return f'{{"value":{_number(values[_VALUE])}}}'
    return (f'{{"count":{values[_COUNT]},"sum":{_number(values[_SUM])},'
            f'"buckets":{values[_BUCKETS]}}}')


def _cumulative(kind: str, values: Sequence[Any]) -> metric_delta.Values:
    """A cumulative point's values as metric_delta takes them."""
    if kind == "sum":
        return values[_VALUE]
    buckets = orjson.loads(values[_BUCKETS]) if values[_BUCKETS] else {}
    if kind == "histogram":
        return metric_delta.histogram(values[_COUNT], values[_SUM], buckets)
    return {"count": values[_COUNT], "sum": values[_SUM], "buckets": buckets}


def _buckets(kind: str, found: metric_delta.Values) -> dict[str, Any] | None:
    """The buckets of a histogram's values (metric_delta's form) as stored, parsed;
    None for a sum."""
    if kind == "sum":
        return None
    if kind == "histogram":
        return {"bounds": found[2], "counts": found[3]}
    return found["buckets"]


def _apply(kind: str, values: list[Any], diff: metric_delta.Values) -> None:
    """The stored row's values set to the delta. The min and max of a cumulative
    histogram are over its whole time, not the delta's own, so the row has none. They
    still bound every value in the delta: _rollups keeps the delta's counts within
    them (read from the point as it came), as it keeps a delta point's within its
    own. Without them an OTLP bucket's counts would go to its upper bound: 300 ms
    requests in (250 ms, 500 ms] read as about 490 ms, where a delta temporality
    SDK's read 300 ms."""
    if kind == "sum":
        values[_VALUE] = diff
        return
    values[_MIN] = values[_MAX] = None
    values[_COUNT], values[_SUM] = ((diff[0], diff[1]) if kind == "histogram"
                                    else (diff["count"], diff["sum"]))
    values[_BUCKETS] = orjson.dumps(_buckets(kind, diff)).decode()
