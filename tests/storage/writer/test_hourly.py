"""The hourly rollups (storage/writer/hourly.py, migration 0014) and the long-range
performance queries that read them (storage/queries/performance.py), on SQLite and
PostgreSQL: counts equal to the per-minute rows', quantiles within the coarse
histogram's 5% of the exact value at that rank, and the migration's backfill equal
to what the writer writes."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
from alembic import command
from sqlalchemy import select

from model import histogram
from model.records import Batch, RequestMetric
from storage import keys, rows, schema
from storage.queries import performance as pq
from storage.store import Store
from storage.wire.batch import write_batches
from storage.writer.groups import upsert_rollups
from tests.support.migrations import migrate

NOW = 1_795_168_800  # 2026-11-20T10:00:00Z, on the hour
US = 1_000_000
HOUR, DAY = 3600, 86_400
ROUTES = ("/a", "/b", "/c")


def _requests(rng: random.Random, n: int, start_s: int, end_s: int) -> list[RequestMetric]:
    out = []
    for _ in range(n):
        ts_us = rng.randrange(start_s * US, end_s * US)
        service, env = rng.choice((("web", "prod"), ("web", "staging"), ("api", "prod")))
        out.append(RequestMetric("GET", rng.choice(ROUTES), 500 if rng.random() < 0.1 else 200,
                                 rng.lognormvariate(3, 1.2), ts_us, service, env))
    return out


@pytest.fixture
def loaded(store: Store) -> Iterator[tuple[Store, int, list[RequestMetric]]]:
    """Two days of requests (in three commits, so that hours are upserted into) and,
    for service `metered`, metric rollups that stand for its requests instead."""
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "hourly")
    rng = random.Random(14)
    requests = _requests(rng, 3000, NOW - 2 * DAY, NOW)
    for part in (requests[:1000], requests[1000:2000], requests[2000:]):
        with store.writer.begin() as conn:
            write_batches(conn, [Batch(project_id=project, requests=part)], NOW * US)
    with store.writer.begin() as conn:
        cursor = conn.connection.cursor()
        minute = NOW - DAY - 17 * 60
        key = (project, "metered", "prod", "GET", "/m", minute)
        upsert_rollups(cursor, conn.dialect.name, {key: [4, 1, 40.0]},
                       {(key, histogram.bucket_of(10.0)): 4}, rows.METRIC_REQUEST_ROLLUPS,
                       None)
        # Spans of `metered` too: not counted, since it has metric rollups in range.
        write_batches(conn, [Batch(project_id=project, requests=[
            RequestMetric("GET", "/m", 200, 10.0, (minute + 5) * US, "metered", "prod")])],
            NOW * US)
    yield store, project, requests


def _hourly_of_minutes(store: Store) -> tuple[set[Any], set[Any]]:
    """The hourly tables' rows as the per-minute tables make them."""
    r, lat = schema.request_rollups, schema.request_latency
    hours: dict[Any, list[Any]] = {}
    coarse: dict[Any, int] = {}
    with store.reader.connect() as conn:
        for row in conn.execute(select(r)):
            key = (row.project_id, row.service, row.env, row.method, row.route,
                   row.minute // HOUR * HOUR)
            agg = hours.setdefault(key, [0, 0, 0.0])
            agg[0] += row.count
            agg[1] += row.error_count
            agg[2] += row.duration_sum_ms
        for row in conn.execute(select(lat)):
            key = (row.project_id, row.service, row.env, row.method, row.route,
                   row.minute // HOUR * HOUR, histogram.coarse_of(row.bucket))
            coarse[key] = coarse.get(key, 0) + row.count
    return ({(*k, c, e, round(s, 6)) for k, (c, e, s) in hours.items()},
            {(*k, n) for k, n in coarse.items()})


def _hourly(store: Store) -> tuple[set[Any], set[Any]]:
    r, lat = schema.request_rollups_hourly, schema.request_latency_hourly
    with store.reader.connect() as conn:
        return ({(*row[:-1], round(row[-1], 6)) for row in conn.execute(select(r))},
                {tuple(row) for row in conn.execute(select(lat))})


def test_hourly_rows_are_the_sum_of_their_minutes(loaded: Any) -> None:
    store, _project, _requests = loaded
    made = _hourly(store)
    assert made == _hourly_of_minutes(store)
    assert len(made[0]) > 100 and len(made[1]) > 1000



def _parsed(rows: Any) -> list[tuple[Any, ...]]:
    """Rows ending with their latency buckets' JSON, read (the JSON is only text)."""
    return [(*row[:-1], json.loads(row[-1])) for row in rows]


def test_the_migration_backfills_what_the_writer_writes(loaded: Any) -> None:
    store, _project, _requests = loaded
    written = _hourly(store)
    with store.reader.connect() as conn:
        metric = _parsed(conn.execute(select(schema.metric_request_rollups_hourly)))
    assert len(metric) == 1
    migrate(store, command.downgrade, "0011")
    migrate(store, command.upgrade, "head")
    assert _hourly(store) == written
    with store.reader.connect() as conn:
        assert _parsed(conn.execute(select(schema.metric_request_rollups_hourly))) == metric


def _exact(durations: list[float], q: float) -> float:
    ordered = sorted(durations)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def _within(value: float | None, exact: float, accuracy: float) -> bool:
    return value is not None and abs(value - exact) <= accuracy * exact * (1 + 1e-9)


def test_a_long_series_counts_as_its_minutes_with_quantiles_within_5_percent(
        loaded: Any) -> None:
    store, project, requests = loaded
    start, end = NOW - 2 * DAY, NOW
    hourly = pq.series(store, project, start, end, HOUR, "web", "prod")
    # Steps of ten minutes never read the hourly rollups: the same counts, per minute.
    fine = pq.series(store, project, start, end, 600, "web", "prod")
    assert sum(hourly.count) == sum(fine.count) > 0
    for i, t in enumerate(hourly.t):
        mine = [r for r in requests if (r.service, r.env) == ("web", "prod")
                and t <= r.ts_us // US < t + HOUR]
        assert hourly.count[i] == len(mine) == sum(fine.count[6 * i:6 * i + 6])
        assert hourly.error_rate[i] == (
            sum(r.status >= 500 for r in mine) / len(mine) if mine else None)
        for q, got in ((0.5, hourly.p50_ms[i]), (0.95, hourly.p95_ms[i]),
                       (0.99, hourly.p99_ms[i])):
            if mine:
                assert _within(got, _exact([r.duration_ms for r in mine], q),
                               histogram.COARSE_ACCURACY)
    # A short range keeps the fine histogram's 1%.
    short = pq.series(store, project, NOW - HOUR, NOW, 60, "web", "prod")
    for i, t in enumerate(short.t):
        mine = [r.duration_ms for r in requests if (r.service, r.env) == ("web", "prod")
                and t <= r.ts_us // US < t + 60]
        if mine:
            assert _within(short.p95_ms[i], _exact(mine, 0.95), histogram.ACCURACY)


def test_long_routes_windows_and_services_read_hours_and_their_edge_minutes(
        loaded: Any) -> None:
    store, project, requests = loaded
    # Not on the hour: whole hours from the hourly rollups, the ends per minute.
    start, end = NOW - 2 * DAY + 17 * 60, NOW - 23 * 60
    inside = [r for r in requests if start <= r.ts_us // US < end]
    routes = pq.routes(store, project, start, end, "web", "prod")
    for route in routes:
        mine = [r for r in inside if (r.service, r.env, r.route) == ("web", "prod", route.route)]
        assert (route.count, route.error_count) == (len(mine),
                                                    sum(r.status >= 500 for r in mine))
        assert route.avg_ms == pytest.approx(sum(r.duration_ms for r in mine) / len(mine))
        assert _within(route.p95_ms, _exact([r.duration_ms for r in mine], 0.95),
                       histogram.COARSE_ACCURACY)
    assert {r.route for r in routes} == set(ROUTES)
    every = pq.window_by_service(store, project, start, end)
    assert set(every) == {"web", "api", "metered"}
    assert (every["metered"].count, every["metered"].error_count) == (4, 1)
    for service in ("web", "api"):
        mine = [r.duration_ms for r in inside if r.service == service]
        w = pq.window(store, project, start, end, service)
        assert w == every[service] and w.count == len(mine)
        assert _within(w.p99_ms, _exact(mine, 0.99), histogram.COARSE_ACCURACY)
    assert [(s.service, s.env, s.count) for s in pq.services(store, project, start, end)] == \
        sorted(((svc, env, sum((r.service, r.env) == (svc, env) for r in inside))
                for svc, env in {(r.service, r.env) for r in inside}),
               key=lambda item: (-item[2], item[0], item[1])) + [("metered", "prod", 4)]



def test_histograms_read_again_are_read_anew_where_a_block_changed(loaded: Any) -> None:
    """The latency cache (storage/queries/latency_cache.py) is checked against each
    block's totals: a request added to an old hour or minute shows at once."""
    store, project, requests = loaded
    start, end = NOW - 2 * DAY, NOW
    first = pq.series(store, project, start, end, HOUR, "web", "prod")
    assert pq.series(store, project, start, end, HOUR, "web", "prod") == first
    hour = 5  # an old hour: far slower requests there move its quantiles
    at = start + hour * HOUR + 90
    late = [RequestMetric("GET", "/a", 200, 9000.0, at * US, "web", "prod")
            for _ in range(3 * first.count[hour])]
    with store.writer.begin() as conn:
        write_batches(conn, [Batch(project_id=project, requests=late)], NOW * US)
    again = pq.series(store, project, start, end, HOUR, "web", "prod")
    assert again.count[hour] == 4 * first.count[hour]
    assert _within(again.p50_ms[hour], 9000.0, histogram.COARSE_ACCURACY)
    assert again.p50_ms[:hour] == first.p50_ms[:hour]
    minute = pq.series(store, project, start, end, 600, "web", "prod")
    assert _within(minute.p50_ms[6 * hour], 9000.0, histogram.ACCURACY)
    window = pq.window(store, project, at - 60, at + 60, "web", "prod")
    assert window.count == len(late) + sum(
        1 for r in requests if (r.service, r.env) == ("web", "prod")
        and at - 60 <= r.ts_us // US < at + 60)
    everything = requests + late
    for route in pq.routes(store, project, start, end, "web", "prod"):
        mine = [r.duration_ms for r in everything
                if (r.service, r.env, r.route) == ("web", "prod", route.route)]
        assert route.count == len(mine)
        assert _within(route.p95_ms, _exact(mine, 0.95), histogram.COARSE_ACCURACY)
