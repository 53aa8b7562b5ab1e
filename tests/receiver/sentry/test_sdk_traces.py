"""The real Sentry Python SDK's transaction with child spans becomes a trace, and an
error captured inside it links to that trace: stored, and shown by the traces API,
on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.receiver.sentry.e2e import api, send, start_with_api
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)


def test_a_transaction_becomes_a_trace_and_its_error_links_to_it(
        start: Callable[..., Server], db_url: str) -> None:
    server = start_with_api(start, db_url)
    result = send(server, "transaction")
    [event_id] = result["ids"]
    ids = result["info"]
    trace_id = ids["trace_id"]

    spans = server.query("SELECT span_id, parent_span_id, name FROM spans "
                         "WHERE trace_id = :t", t=bytes.fromhex(trace_id))
    by_id = {bytes(s).hex(): (bytes(p).hex() if p else "", name) for s, p, name in spans}
    assert by_id == {ids["root"]: ("", "GET /orders/{id}"),
                     ids["db"]: (ids["root"], "SELECT * FROM orders"),
                     ids["prices"]: (ids["db"], "GET /prices")}

    # The error carries contexts.trace: stored on its trace and the transaction's span.
    [(stored_trace, stored_span, key)] = server.query(
        "SELECT trace_id, span_id, occurrence_key FROM error_events")
    assert (stored_trace, stored_span, key) == (trace_id, ids["root"], event_id)

    listed = api(server, "/traces")["page"]["items"]
    [summary] = [t for t in listed if t["trace_id"] == trace_id]
    assert (summary["span_count"], summary["root_name"]) == (3, "GET /orders/{id}")
    trace = api(server, f"/traces/{trace_id}")
    rows = [(r["span"]["span_id"], r["span"]["parent_span_id"], r["depth"])
            for r in trace["rows"]]
    assert rows == [(ids["root"], "", 0), (ids["db"], ids["root"], 1),
                    (ids["prices"], ids["db"], 2)]
    [error] = trace["errors"]
    assert (error["exception_class"], error["message"], error["span_id"]) == \
        ("ValueError", "card of order 7 declined", ids["root"])
