"""POST /ingest/requests: batched request metrics, rolled up per minute with a
latency histogram whose percentiles are within 2% of the exact ones."""

from __future__ import annotations

import math
import random

import pytest

from model import histogram
from tests.support.server import Projects, Server

MINUTE = "2026-11-21T10:15:"


def item(**overrides: object) -> dict[str, object]:
    record: dict[str, object] = {"method": "GET", "route": "/api/orders/:id", "status": 200,
                                 "duration_ms": 12.5, "timestamp": MINUTE + "10Z",
                                 "service": "shop", "env": "production"}
    record.update(overrides)
    return record


def exact_quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def stored_quantile(server: Server, q: float, route: str = "/api/orders/:id") -> float:
    rows = server.query("SELECT bucket, count FROM request_latency WHERE route = :r "
                        "AND project_id = :p", r=route, p=server.project_id())
    counts: dict[int, int] = {}
    for row in rows:  # several minutes (and several writers) merge by addition
        counts[row.bucket] = counts.get(row.bucket, 0) + row.count
    value = histogram.quantile(counts, q)
    assert value is not None
    return value


def test_rollups_count_errors_and_give_percentiles_within_2_percent(
        module_projects: Projects) -> None:
    server = module_projects.take()
    rng = random.Random(7)
    durations = [rng.lognormvariate(3, 1.2) for _ in range(3000)]
    statuses = [500 if i % 10 == 0 else (404 if i % 7 == 0 else 200) for i in range(3000)]
    items = [item(duration_ms=d, status=s, timestamp=MINUTE + f"{i % 60:02d}Z")
             for i, (d, s) in enumerate(zip(durations, statuses, strict=True))]
    for start in range(0, len(items), 1000):  # three requests into one rollup row
        response = server.post("/ingest/requests", {"requests": items[start:start + 1000]})
        assert response.status_code == 202
        assert response.json() == {"accepted": 1000, "rejected": 0, "rejected_items": []}
    (row,) = server.project_rows("request_rollups")
    assert (row.service, row.env, row.method, row.route) == ("shop", "production", "GET",
                                                             "/api/orders/:id")
    assert row.minute == 1_795_256_100  # 10:15:00Z
    assert row.count == 3000
    assert row.error_count == sum(1 for s in statuses if s >= 500)
    assert row.duration_sum_ms == pytest.approx(sum(durations))
    for q in (0.5, 0.95, 0.99):
        exact = exact_quantile(durations, q)
        assert abs(stored_quantile(server, q) - exact) / exact <= 0.02


def test_items_split_by_route_method_and_minute(module_projects: Projects) -> None:
    server = module_projects.take()
    body = {"requests": [item(), item(method="post"), item(route=None, path="/health"),
                         item(timestamp="2026-11-21T10:16:01Z")]}
    assert server.post("/ingest/requests", body).status_code == 202
    rows = server.project_rows("request_rollups", "method, route, minute, count",
                               order_by="minute, method, route")
    assert [(r.method, r.route, r.minute - 1_795_256_100, r.count) for r in rows] == [
        ("GET", "/api/orders/:id", 0, 1), ("GET", "/health", 0, 1),
        ("POST", "/api/orders/:id", 0, 1), ("GET", "/api/orders/:id", 60, 1)]


def test_invalid_items_are_reported_and_the_rest_kept(module_projects: Projects) -> None:
    server = module_projects.take()
    body = {"requests": [item(), item(status=99), item(duration_ms=-1), item(route=None),
                         item(method=None), item(duration_ms="fast")]}
    response = server.post("/ingest/requests", body)
    assert response.status_code == 202
    payload = response.json()
    assert (payload["accepted"], payload["rejected"]) == (1, 5)
    fields = [d["field"] for r in payload["rejected_items"] for d in r["details"]]
    assert fields == ["requests[1].status", "requests[2].duration_ms", "requests[3].route",
                      "requests[4].method", "requests[5].duration_ms"]
    assert server.project_rows("request_rollups", "sum(count)")[0][0] == 1


@pytest.mark.parametrize(("body", "status"), [
    ({"requests": [{"method": "GET"}]}, 400),
    ({"requests": []}, 400),
    ({"items": [item()]}, 400),
    ({"requests": [item()] * 10_001}, 400),
])
def test_envelope_and_all_invalid_batches_are_400(module_projects: Projects,
                                                  body: dict[str, object], status: int) -> None:
    server = module_projects.take()
    assert server.post("/ingest/requests", body).status_code == status

