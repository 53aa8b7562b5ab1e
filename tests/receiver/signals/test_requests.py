"""receiver/signals/requests.py: a batch of request metrics answered item by item."""

from __future__ import annotations

from receiver.signals.requests import handle_requests
from tests.receiver.signals.collect import TRACE_ID, run


def test_valid_metrics_are_kept_and_the_others_named() -> None:
    outcome, (batch,) = run(handle_requests, {"requests": [
        {"method": "get", "route": "/a", "status": 200, "duration_ms": 1.5},
        {"method": "GET", "route": "/b", "status": 42, "duration_ms": 1}]})
    assert outcome.batch is not None
    assert (outcome.batch.accepted, [r["index"] for r in outcome.batch.rejected]) == (1, [1])
    (metric,) = batch.requests
    assert (metric.method, metric.route, metric.trace_id) == ("GET", "/a", TRACE_ID)
