"""The Metrics read API and page over HTTP against the real server, on points
written into its store by the store's real writer."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS
from tests.dashboard.metric_data import RANGE, T0, point, write_metrics
from tests.receiver.metrics_helpers import collector_request
from tests.support.server import Server

API = "/api/v1/projects/acme/metrics"


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def get(server: Server, path: str, **params: Any) -> requests.Response:
    return requests.get(server.base + path, headers=admin(), params=params, timeout=10)


def metric(server: Server, name: str, **params: Any) -> dict[str, Any]:
    response = get(server, f"{API}/{name}", **{**RANGE, **params})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def stored(dash_server: Server) -> Server:
    write_metrics(dash_server, *(
        point("http.requests", 60 * m + 30, value=m + 1,
              attributes={"route": route, "status": 200})
        for m in range(3) for route in ("/a", "/b")))
    write_metrics(dash_server,
                  point("queue/depth", 90, 7.0, kind="gauge", monotonic=False,
                        temporality=0, unit="{job}", description="Jobs waiting"),
                  *(point("logins", 30, value=i + 1, attributes={"user": f"u{i:02}"})
                    for i in range(30)),
                  point("latency", 30, kind="histogram", unit="ms", count=10, sum=300.0,
                        bounds=[10.0, 50.0], bucket_counts=[2, 7, 1]))
    return dash_server


def test_the_list_has_each_metric_with_kind_unit_and_services(stored: Server) -> None:
    response = get(stored, API)
    assert response.status_code == 200
    listed = {m["name"]: m for m in response.json()["metrics"]}
    assert {"http.requests", "queue/depth", "logins", "latency"} <= set(listed)
    depth = listed["queue/depth"]
    assert (depth["kind"], depth["unit"], depth["description"], depth["services"],
            depth["series"]) == ("gauge", "{job}", "Jobs waiting", ["web"], 1)
    assert depth["last_seen_ns"] == (T0 + 90) * 1_000_000_000
    assert listed["http.requests"]["series"] == 2
    assert get(stored, API, service="nobody").json() == {"metrics": []}


def test_a_counter_per_step_grouped_and_filtered(stored: Server) -> None:
    document = metric(stored, "http.requests")
    assert (document["step_s"], document["aggregation"], document["aggregations"]) == (
        60, "sum", ["sum", "rate"])
    assert document["t"][:2] == [T0, T0 + 60]
    (line,) = document["groups"]
    assert line["values"][:4] == [2.0, 4.0, 6.0, None]
    by_route = metric(stored, "http.requests", group_by="route", agg="rate")
    assert [(g["group"], g["values"][:3]) for g in by_route["groups"]] == [
        ("/a", [1 / 60, 2 / 60, 3 / 60]), ("/b", [1 / 60, 2 / 60, 3 / 60])]
    only_a = metric(stored, "http.requests", filter=["route=/a", "status=200"])
    assert only_a["groups"][0]["values"][:3] == [1.0, 2.0, 3.0]
    assert only_a["filters"] == {"route": "/a", "status": "200"}
    wide = metric(stored, "http.requests", step=600)
    assert wide["groups"][0]["values"] == [12.0, None, None, None, None, None]


def test_a_name_with_a_slash_and_a_histogram(stored: Server) -> None:
    assert metric(stored, "queue/depth")["groups"][0]["values"][1] == 7.0
    latency = metric(stored, "latency", agg="p50")
    (line,) = latency["groups"]
    assert 10 < line["values"][0] <= 50 and line["count"][0] == 10
    assert line["sum"][0] == 300.0


def test_the_group_cap_is_stated(stored: Server) -> None:
    capped = metric(stored, "logins", group_by="user")
    assert (capped["groups_total"], capped["max_groups"], capped["groups_capped"]) == (
        30, 20, True)
    assert len(capped["groups"]) == 20 and capped["groups"][0]["group"] == "u29"
    assert not metric(stored, "logins", group_by="user", max_groups=30)["groups_capped"]


@pytest.mark.parametrize(("params", "named"), [
    ({"agg": "median"}, "'agg'"),
    ({"agg": "p95"}, "'agg' for a sum metric"),
    ({"kind": "counter"}, "'kind'"),
    ({"step": "0"}, "'step'"),
    ({"step": "soon"}, "'step'"),
    ({"step": "1", "range": "30d"}, "'step'"),
    ({"filter": "route"}, "'filter'"),
    ({"filter": "=x"}, "'filter'"),
    ({"max_groups": "1000"}, "'max_groups'"),
    ({"range": "forever"}, "range"),
    ({"range": "custom", "from": "yesterday"}, "'from'"),
])
def test_bad_parameters_are_a_400_naming_them(stored: Server, params: dict[str, str],
                                              named: str) -> None:
    response = get(stored, f"{API}/http.requests", **{**RANGE, **params})
    assert response.status_code == 400, response.text
    assert named in response.json()["error"]


@pytest.mark.parametrize("edges", [
    {"from": "1970-01-01T00:00:00Z", "to": "1970-01-02"},
    {"from": "2262-04-11T23:00:00", "to": "2262-04-11T23:47:16"},
])
def test_ranges_at_the_edges_of_time_are_answered(stored: Server, edges: dict[str, str]
                                                  ) -> None:
    for name in ("http.requests", "latency", "queue/depth"):
        document = metric(stored, name, **{"range": "custom", **edges})
        assert document["groups"] == [] and document["t"]


def test_an_unknown_metric_is_a_404(stored: Server) -> None:
    for path, params in ((f"{API}/nope", {}), (f"{API}/http.requests", {"kind": "gauge"}),
                         ("/api/v1/projects/nobody/metrics", {})):
        response = get(stored, path, **params)
        assert response.status_code == 404, path
        assert "error" in response.json()
    assert requests.get(stored.base + f"{API}/http.requests", timeout=10).status_code == 401


def test_the_page_lists_and_charts_with_client_data_escaped(stored: Server) -> None:
    write_metrics(stored, point(XSS, 30, attributes={XSS: XSS}, unit=XSS, description=XSS))
    session = requests.Session()
    session.headers.update(admin())
    listing = session.get(stored.base + "/projects/acme/metrics", timeout=10)
    assert listing.status_code == 200
    assert "http.requests" in listing.text and "Pick a metric" in listing.text
    chart = session.get(stored.base + "/projects/acme/metrics", timeout=10,
                        params={**RANGE, "metric": XSS, "group_by": XSS})
    assert chart.status_code == 200
    assert 'data-kind="metric"' in chart.text
    assert XSS not in listing.text and XSS not in chart.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in chart.text
    missing = session.get(stored.base + "/projects/acme/metrics", timeout=10,
                          params={"metric": "nope"})
    assert missing.status_code == 404
    bad = session.get(stored.base + "/projects/acme/metrics", timeout=10,
                      params={"metric": "http.requests", "agg": "p99"})
    assert bad.status_code == 400 and "agg" in bad.text


def test_a_collector_request_through_the_door_reads_back(dash_server: Server) -> None:
    """Every kind of point, sent as OTLP protobuf to /ingest/v1/metrics."""
    body = collector_request(60).SerializeToString()
    response = requests.post(dash_server.base + "/ingest/v1/metrics", data=body, timeout=10,
                             headers={"Authorization": f"Bearer {dash_server.key}",
                                      "Content-Type": "application/x-protobuf"})
    assert response.status_code == 202, response.text
    at = {"range": "custom", "from": "2025-11-24T16:00", "to": "2025-11-24T16:10"}

    def first(name: str, **params: str) -> Any:
        (line,) = metric(dash_server, name, **at, **params)["groups"]
        return line["values"][1]  # the point is at 16:01

    assert first("system.network.io") == 1234.0
    assert first("system.memory.utilization") == 0.42
    assert first("legacy.latency") == 5.5  # a summary reads as its mean
    # Six durations in (0, 0.005], (0.005, 0.1], (0.1, 0.5], beyond: rank 3 in (0.005, 0.1].
    assert 0.005 < first("http.server.request.duration", agg="p50") <= 0.1
    assert 0 < first("rpc.server.duration", agg="p99") <= 20.0
    listed = {m["name"]: m for m in get(dash_server, API).json()["metrics"]}
    assert listed["rpc.server.duration"]["kind"] == "exponential_histogram"
    assert listed["legacy.latency"]["services"] == ["checkout"]
