"""GET /metrics after real traffic: what was accepted, refused and dropped per
signal and reason, the queue, the group commits, and request latency per endpoint."""

from __future__ import annotations

import uuid

import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.exporters.senders import SPANS_PER_REQUEST, error_batch, trace_request
from tests.support.server import Server


def samples(server: Server) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = requests.get(server.base + "/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.text)
            for s in family.samples}


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
          **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


def test_metrics_count_what_real_traffic_did(sqlite_server: Server) -> None:
    server = sqlite_server
    headers = {"Authorization": f"Bearer {server.key}", "Content-Type": "application/x-protobuf"}
    for bad in (0, 0, 2):  # the last request has two spans with a bad id
        response = requests.post(server.base + "/ingest/v1/traces", headers=headers, timeout=30,
                                 data=trace_request(uuid.uuid4().bytes, bad_span_ids=bad))
        assert response.status_code == 202
    for _ in range(2):
        assert server.post("/ingest/errors/batch",
                           error_batch(uuid.uuid4().hex)).status_code == 202
    assert server.post("/ingest/errors", data=b"{not json").status_code == 400
    assert requests.post(server.base + "/ingest/deploys", json={"git_sha": "abc"},
                         timeout=10).status_code == 401

    found = samples(server)
    spans = 3 * SPANS_PER_REQUEST - 2
    assert value(found, "sounding_records_accepted_total", signal="spans") == spans
    assert value(found, "sounding_records_accepted_total", signal="errors") == 20
    assert value(found, "sounding_records_dropped_total", signal="spans", reason="invalid") == 2
    assert value(found, "sounding_requests_refused_total", endpoint="errors",
                 reason="invalid") == 1
    assert value(found, "sounding_requests_refused_total", endpoint="deploys",
                 reason="unauthenticated") == 1
    assert value(found, "sounding_queue_records") == 0
    assert value(found, "sounding_queue_bytes") == 0
    # Every committed record went through a group commit, each one timed.
    commits = value(found, "sounding_commit_records_count")
    assert commits is not None and 1 <= commits <= 5
    assert value(found, "sounding_commit_records_sum") == spans + 20
    assert value(found, "sounding_commit_seconds_count") == commits
    assert (value(found, "sounding_commit_seconds_sum") or 0) > 0
    for endpoint, count in (("traces", 3), ("errors_batch", 2), ("errors", 1)):
        assert value(found, "sounding_request_seconds_count", endpoint=endpoint) == count
        assert (value(found, "sounding_request_seconds_sum", endpoint=endpoint) or 0) > 0
