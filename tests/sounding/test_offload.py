"""Decode workers (sounding/offload.py): large trace requests are decoded and
processed in worker processes, small ones on the event loop; both store the same."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import requests

from tests.exporters.senders import (
    assert_all_acknowledged_stored,
    join,
    start_senders,
    trace_request,
    wait_for_acks,
)
from tests.exporters.test_sql_durability import _descendants
from tests.receiver.otlp_helpers import assert_stored_as_sent, collector_request, random_trace_id
from tests.receiver.test_otlp_http import post
from tests.support.server import Server


def _workers(server: Server) -> list[int]:
    return [pid for pid in _descendants(server.proc.pid)
            if "sounding.offload" in Path(f"/proc/{pid}/cmdline").read_text()]


def _offloaded(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r"^sounding_decode_offloaded_requests_total (\S+)$", text, re.M)
    assert match, "no offload counter in /metrics"
    return float(match.group(1))


def test_bodies_from_the_threshold_go_to_a_worker_smaller_ones_stay_inline(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_DECODE_WORKERS": "2",
                                    "SOUNDING__SERVICE__DECODE_MIN_BYTES": "8192"})
    assert len(_workers(server)) == 2
    small, sent_small = collector_request(random_trace_id())
    large, sent_large = collector_request(random_trace_id())
    for scope_spans in (s for rs in large.resource_spans for s in rs.scope_spans):
        for span in scope_spans.spans:
            span.attributes.add(key="padding").value.string_value = "x" * 400
    for sent in sent_large:
        sent["attributes"]["padding"] = "x" * 400
    assert len(small.SerializeToString()) < 8192 <= len(large.SerializeToString())

    before = _offloaded(server)
    assert post(server, small.SerializeToString()).status_code == 202
    assert _offloaded(server) == before
    assert post(server, large.SerializeToString()).status_code == 202
    assert _offloaded(server) == before + 1
    assert_stored_as_sent(server, sent_small)
    assert_stored_as_sent(server, sent_large)


def test_with_no_workers_every_request_is_decoded_inline(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_DECODE_WORKERS": "0"})
    assert _workers(server) == []
    request, sent = collector_request(random_trace_id())
    assert post(server, request.SerializeToString()).status_code == 202
    assert_stored_as_sent(server, sent)
    assert _offloaded(server) == 0
    # The same 400 as through a worker (tests/receiver/test_otlp_http.py).
    response = post(server, b"\xff\xff not protobuf")
    assert response.status_code == 400
    assert "not a valid OTLP ExportTraceServiceRequest" in response.json()["error"]


def test_a_killed_worker_is_replaced_and_nothing_acknowledged_is_lost(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_DECODE_WORKERS": "1"})
    (worker,) = _workers(server)
    senders = start_senders(server, count=3)
    try:
        wait_for_acks(senders, at_least=30, timeout=60)
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not (_workers(server) and _workers(server) != [worker]):
            assert time.monotonic() < deadline, f"the worker was not replaced:\n{server.log()}"
            time.sleep(0.1)
        acked = sum(s.acked for s in senders)
        # And ingest goes on through the new one.
        wait_for_acks(senders, at_least=acked + 30, timeout=60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\ncollector log:\n{server.log()[-4000:]}") from exc
    finally:
        for sender in senders:
            sender.stop.set()
        join(senders)
    spans, _ = assert_all_acknowledged_stored(server, senders)
    assert spans > 0
    assert "decode worker 0 stopped" in server.log()
    server.output.clear()  # the error line above is the point of this test


def test_past_the_bytes_in_flight_bound_requests_are_refused_with_503(
        start: Callable[..., Server], sqlite_url: str) -> None:
    # A bound of one byte: one request at a time may be with the workers.
    server = start(sqlite_url, env={"SOUNDING__SERVICE__DECODE_MAX_BYTES": "1"})
    answers: dict[str, requests.Response] = {}
    traces = [random_trace_id() for _ in range(24)]

    def send(trace_id: str) -> None:
        answers[trace_id] = post(server, trace_request(bytes.fromhex(trace_id), spans=400))

    threads = [threading.Thread(target=send, args=(t,)) for t in traces]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    statuses = sorted(r.status_code for r in answers.values())
    assert set(statuses) == {202, 503}, statuses
    assert all(r.headers["Retry-After"] == "1" for r in answers.values()
               if r.status_code == 503)
    assert "decode workers are busy" in next(
        r.json()["error"] for r in answers.values() if r.status_code == 503)
    stored = server.spans_per_trace()
    assert sorted(stored) == sorted(t for t, r in answers.items() if r.status_code == 202)
    assert set(stored.values()) == {400}
