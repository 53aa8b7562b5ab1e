"""Where the Sentry door decodes: an envelope below `decode_min_bytes` on the event
loop, a larger one with records (a transaction of many spans) in a decode worker, as
a large OTLP request is (runtime/offload.py). Both store the same records."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import requests

from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import post_envelope, start_sentry
from tests.support.server import Server

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
MIN_BYTES = 16_384


def offloaded(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    found = re.search(r"^sounding_decode_offloaded_requests_total (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def transaction(event_id: str, spans: int) -> dict[str, Any]:
    return {
        "event_id": event_id, "type": "transaction", "platform": "python",
        "transaction": "GET /orders", "start_timestamp": 1_790_000_000.0,
        "timestamp": 1_790_000_001.0, "tags": {"service": "orders"},
        "contexts": {"trace": {"trace_id": TRACE_ID, "span_id": "a" * 16,
                               "op": "http.server", "status": "ok"}},
        "spans": [{"trace_id": TRACE_ID, "span_id": f"{i + 1:016x}", "parent_span_id": "a" * 16,
                   "op": "db", "description": f"SELECT {i} FROM orders WHERE id = %s",
                   "start_timestamp": 1_790_000_000.1, "timestamp": 1_790_000_000.2}
                  for i in range(spans)]}


def test_small_envelopes_stay_on_the_event_loop_and_large_ones_go_to_a_worker(
        start: Callable[..., Server]) -> None:
    server = start_sentry(start, env={"SOUNDING__SERVICE__DECODE_MIN_BYTES": str(MIN_BYTES)})
    small = envelope({"event_id": "1" * 32}, [item("event", {
        "event_id": "1" * 32, "message": "small", "level": "info"})])
    large = envelope({"event_id": "2" * 32}, [item("transaction", transaction("2" * 32, 300)),
                                              item("client_report", {"discarded_events": []})])
    assert len(small) < MIN_BYTES < len(large)
    before = offloaded(server)
    answers = [post_envelope(server, body) for body in (small, large)]
    assert [(a.status_code, a.json()) for a in answers] == [(200, {"id": "1" * 32}),
                                                            (200, {"id": "2" * 32})]
    assert offloaded(server) == before + 1
    [(spans,)] = server.query("SELECT count(*) FROM spans WHERE trace_id = :t",
                              t=bytes.fromhex(TRACE_ID))
    assert spans == 301
    assert server.query("SELECT message FROM error_events") == [("small",)]


def test_a_large_envelope_of_ignored_items_is_not_sent_to_a_worker(
        start: Callable[..., Server]) -> None:
    server = start_sentry(start, env={"SOUNDING__SERVICE__DECODE_MIN_BYTES": "0"})
    body = envelope({"event_id": "3" * 32}, [item("attachment", b"x" * 50_000)])
    before = offloaded(server)
    answer = post_envelope(server, body)
    assert (answer.status_code, answer.json()) == (200, {"id": "3" * 32})
    assert offloaded(server) == before


def test_a_bad_item_decoded_in_a_worker_is_a_400_naming_it(
        start: Callable[..., Server]) -> None:
    server = start_sentry(start, env={"SOUNDING__SERVICE__DECODE_MIN_BYTES": "0"})
    body = envelope({"event_id": "4" * 32}, [item("session", {}), item("event", b"[1, 2]")])
    answer = post_envelope(server, body)
    assert answer.status_code == 400
    assert "items[1]" in answer.text
    assert server.query("SELECT count(*) FROM error_events") == [(0,)]


def test_sessions_and_feedback_of_a_large_envelope_are_counted_by_a_worker_too(
        start: Callable[..., Server]) -> None:
    """A large envelope's session and feedback items reach the store from a decode
    worker as they do from the event loop; an unreadable one is dropped and counted
    under its own signal, as on the event loop."""
    server = start_sentry(start, env={"SOUNDING__SERVICE__DECODE_MIN_BYTES": str(MIN_BYTES)})
    session = {"sid": "s1", "init": True, "status": "crashed", "started": "2026-11-20T10:00:05Z",
               "attrs": {"release": "shop@1.0", "environment": "prod"}}
    feedback = {"event_id": "4" * 32, "timestamp": 1_790_000_000.0, "contexts": {"feedback": {
        "message": "it broke", "contact_email": "a@example.com",
        "associated_event_id": "2" * 32}}}
    large = envelope({"event_id": "2" * 32}, [
        item("transaction", transaction("2" * 32, 300)), item("session", session),
        item("session", {"sid": "s2", "attrs": {}}),  # no release: dropped
        item("feedback", feedback)])
    assert len(large) > MIN_BYTES
    before = offloaded(server)
    for _ in range(2):  # and once more, as a retry: counted once
        assert post_envelope(server, large).status_code == 200
    assert offloaded(server) == before + 2
    assert server.query("SELECT release, environment, started, crashed FROM session_rollups"
                        ) == [("shop@1.0", "prod", 1, 1)]
    assert server.query("SELECT message, email, associated_event_id FROM feedback") == [
        ("it broke", "a@example.com", "2" * 32)]
    text = requests.get(server.base + "/metrics", timeout=10).text
    assert re.search(r'^sounding_records_dropped_total\{reason="invalid",'
                     r'signal="sessions"\} 2\.0$', text, re.M), text
