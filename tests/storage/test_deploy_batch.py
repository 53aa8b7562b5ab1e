"""The deploys page's reads of every deploy at once (storage/queries/deploy_batch.py
through deploys.correlate_all) against the per-deploy reads (deploys.correlate) over
the same data, on both engines."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import insert

from model import histogram
from model.records import Deploy
from storage import schema
from storage.queries import deploys as dq
from storage.queries import performance as pq
from tests.storage.test_queries import HOUR, MIN, NOW, US, Db, db, err, req  # noqa: F401

__all__ = ["db"]  # the fixture, used by name


def metric_minutes(db: Db, service: str, env: str, minutes: list[int], ms: float) -> None:
    """Rollup rows as the HTTP duration metrics write them (storage/writer/points.py),
    per minute and per hour (storage/writer/hourly.py): 5 requests, one an error."""
    key = {"project_id": db.project, "service": service, "env": env, "method": "GET",
           "route": "/m"}
    bucket = histogram.bucket_of(ms)
    hours = sorted({m // HOUR * HOUR for m in minutes})
    per_hour = {h: sum(1 for m in minutes if m // HOUR * HOUR == h) for h in hours}
    with db.store.writer.begin() as conn:
        conn.execute(insert(schema.metric_request_rollups), [
            {**key, "minute": m, "count": 5, "error_count": 1, "duration_sum_ms": 5 * ms,
             "buckets": json.dumps({bucket: 5})} for m in minutes])
        conn.execute(insert(schema.metric_request_rollups_hourly), [
            {**key, "hour": h, "count": 5 * n, "error_count": n, "duration_sum_ms": 5 * n * ms,
             "buckets": json.dumps({histogram.coarse_of(bucket): 5 * n})}
            for h, n in per_hour.items()])


@pytest.fixture
def busy(db: Db) -> Db:
    """Deploys to several environments, some on the same instant, over requests of
    span-fed services and of one that also has metric rollups in some minutes (whose
    span rows must then not count), a day back, with errors of releases."""
    d2 = NOW - 2 * HOUR + 30
    db.ingest(
        requests=[
            *[req("/x", m + 1, 50.0 + m % 7, 500 if m % 11 == 0 else 200)
              for m in range(NOW - 30 * HOUR, NOW, 7 * MIN)],
            *[req("/y", m + 2, 300.0, service="api", env="prod")
              for m in range(NOW - 5 * HOUR, NOW, 3 * MIN)],
            *[req("/z", m + 3, 20.0, env="staging") for m in range(NOW - 3 * HOUR, NOW, MIN)],
        ],
        deploys=[
            Deploy("d1", (NOW - 3 * HOUR) * US, env="prod"),
            Deploy("d2", d2 * US, version="2.0", env="prod", deployer="ann"),
            Deploy("d3", (NOW - 30 * MIN) * US, version="2.1", env="prod"),
            Deploy("d3b", (NOW - 30 * MIN) * US, version="2.1", env="prod"),
            Deploy("s1", (NOW - 90 * MIN) * US, version="2.0", env="staging"),
            Deploy("q1", (NOW - 20 * HOUR) * US, env="qa"),
            Deploy("n1", (NOW - 80 * MIN) * US)],
        errors=[err("before", d2 - 60), err("after", d2 + 5 * MIN, release="2.0"),
                err("later", NOW - 20 * MIN, release="2.1"),
                err("old", NOW - 26 * HOUR, release="1.0"),
                err("also", NOW - 25 * MIN, release="2.1", environment="prod")])
    metric_minutes(db, "api", "prod", list(range(NOW - 150 * MIN, NOW - 60 * MIN, MIN)), 900.0)
    return db


@pytest.mark.parametrize("window_s", [15 * MIN, HOUR, 6 * HOUR + 30 * MIN, 24 * HOUR])
@pytest.mark.parametrize("now_s", [NOW, NOW - 100 * MIN, NOW + 2 * 24 * HOUR])
def test_all_at_once_is_each_one_by_one(busy: Db, window_s: int, now_s: int) -> None:
    listed = dq.list_deploys(busy.store, busy.project, 0, (NOW + HOUR) * US)
    assert len(listed) == 7
    together = dq.correlate_all(busy.store, busy.project, listed, window_s, now_s * US)
    one_by_one = [dq.correlate(busy.store, busy.project, d, window_s, now_s * US)
                  for d in listed]
    assert together == one_by_one
    # Again, from the histograms cached with their totals.
    assert dq.correlate_all(busy.store, busy.project, listed, window_s, now_s * US) == together


def test_cached_histograms_follow_new_requests(busy: Db) -> None:
    listed = dq.list_deploys(busy.store, busy.project, 0, (NOW + HOUR) * US)
    first = dq.correlate_all(busy.store, busy.project, listed, HOUR, NOW * US)
    busy.ingest(requests=[req("/x", NOW - 2 * HOUR - 10 * MIN, 5000.0) for _ in range(50)])
    again = dq.correlate_all(busy.store, busy.project, listed, HOUR, NOW * US)
    assert again != first
    assert again == [dq.correlate(busy.store, busy.project, d, HOUR, NOW * US) for d in listed]


def test_the_comparison_sees_what_matters(busy: Db) -> None:
    """The data above exercises what the one statement must get right."""
    listed = dq.list_deploys(busy.store, busy.project, 0, (NOW + HOUR) * US)
    found = {c.deploy.git_sha: c for c in dq.correlate_all(
        busy.store, busy.project, listed, 24 * HOUR, (NOW + 2 * 24 * HOUR) * US)}
    assert (found["d1"].length_s, found["d1"].clipped_by) == (HOUR + 30, ["next deploy"])
    # Hourly rollups with minutes at the ends: a day before q1 (no request of qa).
    q1 = found["q1"]
    assert (q1.scope, q1.length_s) == ("all environments", 24 * HOUR)
    assert q1.before.count > 50 and q1.after.count > 50
    # Deploys on the same instant do not clip each other: d2 clips both.
    assert found["d3"].length_s == found["d3b"].length_s == 90 * MIN - 30
    assert found["d3b"].clipped_by == ["previous deploy"]
    # Releases shared by deploys; a group is listed under its first release only.
    assert [g.fingerprint for g in found["d3b"].release_groups] == ["also", "later"]
    assert [g.fingerprint for g in found["s1"].release_groups] == ["after"]
    assert [g.fingerprint for g in found["d2"].new_groups] == ["after"]
    # The service with metric rollups counts those (5 a minute), not its spans, in
    # windows where it has any.
    d2 = dq.correlate_all(busy.store, busy.project, [found["d2"].deploy], HOUR, NOW * US)[0]
    api = pq.window(busy.store, busy.project, d2.before.start_s, d2.before.end_s,
                    service="api", env="prod")
    assert (d2.before.start_s, api.count) == (NOW - 3 * HOUR, 5 * 30)
    assert d2.before.p99_ms == pytest.approx(900, rel=0.01)


def test_nothing_to_correlate(busy: Db) -> None:
    assert dq.correlate_all(busy.store, busy.project, [], HOUR, NOW * US) == []


@pytest.mark.parametrize("window_s", [15 * MIN, 6 * HOUR + 30 * MIN])
def test_deploys_naming_a_service_all_at_once_are_each_one_by_one(busy: Db,
                                                                   window_s: int) -> None:
    """Service-named deploys beside the others: one of the service with metric rows in
    some minutes, of a span-fed one, of one without requests, in an environment
    without requests (every environment then) and in none."""
    busy.ingest(deploys=[
        Deploy("api1", (NOW - 2 * HOUR + 5 * MIN) * US, env="prod", service="api"),
        Deploy("web1", (NOW - 2 * HOUR + 5 * MIN) * US, env="prod", service="web"),
        Deploy("c1", (NOW - 100 * MIN) * US, env="canary", service="api"),
        Deploy("g1", (NOW - 70 * MIN) * US, service="ghost"),
        Deploy("w2", (NOW - 40 * MIN) * US, service="web")])
    listed = dq.list_deploys(busy.store, busy.project, 0, (NOW + HOUR) * US)
    assert len(listed) == 12
    together = dq.correlate_all(busy.store, busy.project, listed, window_s, NOW * US)
    assert together == [dq.correlate(busy.store, busy.project, d, window_s, NOW * US)
                        for d in listed]
    found = {c.deploy.git_sha: c for c in together}
    assert found["api1"].before.count > 0  # the metric rows of api, 5 a minute
    assert found["g1"].before.count == found["g1"].after.count == 0
