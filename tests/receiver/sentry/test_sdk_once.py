"""What the real Sentry Python SDK sent, sent again: an event its transport sends twice
counts once, on one collector and on two sharing a PostgreSQL database at once; and
the same event through the legacy store endpoint is stored as through the envelope."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from storage import schema
from tests.receiver.sentry.e2e import events_of, record, replay, start_with_api
from tests.receiver.sentry.helpers import OTHER_KEY, auth_header, project_id
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)


def counts(server: Server) -> tuple[int, int, int, int]:
    """(error_events rows, sum of group counts, sum of hourly counts, distinct keys)."""
    [row] = server.query(
        "SELECT (SELECT count(*) FROM error_events), (SELECT sum(count) FROM error_groups),"
        " (SELECT sum(count) FROM error_group_hourly),"
        " (SELECT count(DISTINCT occurrence_key) FROM error_events)")
    return tuple(int(n) for n in row)  # type: ignore[return-value]


def test_an_event_sent_twice_counts_once(start: Callable[..., Server], db_url: str) -> None:
    server = start_with_api(start, db_url)
    result, sent = record(server, "exception")
    [event_id] = result["ids"]
    [(request, _event)] = events_of(sent)
    answers = [replay(server, request) for _ in range(2)]
    assert [(a.status_code, a.json()) for a in answers] == [(200, {"id": event_id})] * 2
    assert counts(server) == (1, 1, 1, 1)
    facets = server.query("SELECT facet, value, count FROM error_group_facets "
                          "WHERE facet IN ('environment', 'release', 'level')")
    assert sorted(facets) == [("environment", "test", 1), ("level", "error", 1),
                              ("release", "shop@1.0", 1)]


def test_events_sent_to_two_collectors_at_once_are_stored_once(
        start: Callable[..., Server], pg_url: str) -> None:
    """Each of the SDK's envelopes reaches both collectors at the same time (a retry
    landing on another collector behind a load balancer)."""
    servers = [start_with_api(start, pg_url), start_with_api(start, pg_url)]
    result, sent = record(servers[0], "exceptions")
    requests_sent = [request for request, _event in events_of(sent)]
    assert len(requests_sent) == len(result["ids"]) == 20
    jobs = [(server, request) for request in requests_sent for server in servers]
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda job: replay(*job), jobs))
    assert {a.status_code for a in answers} == {200}
    assert sorted({a.json()["id"] for a in answers}) == sorted(result["ids"])
    assert counts(servers[0]) == (20, 20, 20, 20)
    assert servers[1].query("SELECT count FROM error_groups") == [(20,)]
    facets = servers[0].query("SELECT value, count FROM error_group_facets "
                              "WHERE facet = 'environment'")
    assert facets == [("test", 20)]


def test_the_store_endpoint_stores_the_sdks_event_as_the_envelope_does(
        start: Callable[..., Server], db_url: str) -> None:
    server = start_with_api(start, db_url)
    _result, sent = record(server, "checkout")
    [(request, event)] = events_of(sent)
    assert replay(server, request).status_code == 200
    other = project_id(server, "other")
    stored = requests.post(f"{server.base}/api/{other}/store/", data=json.dumps(event),
                           headers={"Content-Type": "application/json",
                                    **auth_header(OTHER_KEY)}, timeout=30)
    assert (stored.status_code, stored.json()) == (200, {"id": event["event_id"]})

    columns = [c.name for c in schema.error_events.columns
               if c.name not in ("id", "project_id", "received_us")]
    rows = server.query(f"SELECT project_id, {', '.join(columns)} FROM error_events "
                        "ORDER BY project_id")
    assert [r[0] for r in rows] == sorted([project_id(server), other])
    envelope_row, store_row = (dict(zip(columns, r[1:], strict=True)) for r in rows)
    assert store_row == envelope_row
    assert envelope_row["exception_class"] == "RuntimeError"
