"""Decode workers (runtime/offload.py): large trace requests are decoded and
processed in worker processes, small ones on the event loop; both store the same."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from model.errors import StoreUnavailable
from model.records import Batch
from receiver.otlp.decode_traces import decode_traces_body
from runtime.offload import DecodePool, default_workers
from sounding import config
from tests.exporters.senders import (
    assert_all_acknowledged_stored,
    join,
    start_senders,
    trace_request,
    wait_for_acks,
)
from tests.exporters.sql.test_durability import _descendants
from tests.receiver.otlp_helpers import (
    assert_stored_as_sent,
    collector_request,
    random_trace_id,
    request_of,
    span_pb,
)
from tests.receiver.test_otlp_http import post
from tests.support.server import Server


def _workers(server: Server) -> list[int]:
    return [pid for pid in _descendants(server.proc.pid) if "runtime.offload" in _cmdline(pid)]


def _cmdline(pid: int) -> str:
    # A process listed a moment ago may be gone by now (a worker being replaced).
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def _offloaded(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r"^sounding_decode_offloaded_requests_total (\S+)$", text, re.M)
    assert match, "no offload counter in /metrics"
    return float(match.group(1))


def test_bodies_from_the_threshold_go_to_a_worker_smaller_ones_stay_inline(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_DECODE_WORKERS": "2",
                                    "SOUNDING__SERVICE__DECODE_MIN_BYTES": "8192"})
    assert _workers(server) == []  # started when a large body needs one
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
    assert _workers(server) == []
    assert post(server, large.SerializeToString()).status_code == 202
    assert _offloaded(server) == before + 1
    # One: the second of the two is started only when the first is found busy.
    assert len(_workers(server)) == 1
    assert_stored_as_sent(server, sent_small)
    assert_stored_as_sent(server, sent_large)


def test_with_the_default_config_no_worker_runs_until_a_large_body_needs_one(
        start: Callable[..., Server], sqlite_url: str) -> None:
    """A sidecar that sees no large body never pays a worker's memory; the body that
    starts the first worker waits for it and is answered and stored as any other."""
    if default_workers() == 0:
        pytest.skip("one core: 'auto' starts no decode worker at all")
    min_bytes = config.DEFAULTS["service"]["decode_min_bytes"]
    server = start(sqlite_url, env={"SOUNDING__SERVICE__DECODE_MIN_BYTES": str(min_bytes)})
    children = [_cmdline(pid) for pid in _descendants(server.proc.pid)]
    assert [c for c in children if "runtime.offload" in c] == []
    assert len(children) == 1 and "exporters.sql.writer" in children[0], children
    request, sent = collector_request(random_trace_id())
    for scope_spans in (s for rs in request.resource_spans for s in rs.scope_spans):
        for span in scope_spans.spans:
            span.attributes.add(key="padding").value.string_value = "x" * 2000
    for span in sent:
        span["attributes"]["padding"] = "x" * 2000
    body = request.SerializeToString()
    assert len(body) >= min_bytes
    assert post(server, body).status_code == 202
    assert len(_workers(server)) == 1
    assert _offloaded(server) == 1
    assert_stored_as_sent(server, sent)


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
    senders = start_senders(server, count=3)
    try:
        wait_for_acks(senders, at_least=30, timeout=60)
        (worker,) = _workers(server)
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


def _restarts(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r"^sounding_decode_worker_restarts_total (\S+)$", text, re.M)
    assert match, "no worker restart counter in /metrics"
    return float(match.group(1))


def _explode_config(tmp_path: Path) -> str:
    """The default processors after the test plugin's `explode`, which fails on spans
    named boom, boom-recursion, boom-memory (and takes 3 s on boom-slow)."""
    path = tmp_path / "sounding.yaml"
    path.write_text(json.dumps({  # JSON is YAML
        "processors": {"explode": {}, "classify": {}, "grouping": {}, "reopen": {}},
        "service": {"pipeline": {
            "receivers": ["http"], "processors": ["explode", "classify", "grouping", "reopen"],
            "exporters": ["sql"]}}}))
    return str(path)


def _named(name: str) -> bytes:
    return request_of(span_pb(random_trace_id(), "00f067aa0ba902b7", name)).SerializeToString()


def test_poison_bodies_are_their_own_answer_and_never_stop_a_worker(
        start: Callable[..., Server], tmp_path: Path) -> None:
    """The measured scenario in miniature: a client sending valid large traces keeps
    getting 202 while others send bodies that broke a worker (deep JSON: a
    RecursionError while decoding) or make a processor raise, recurse without end
    or allocate a terabyte. Each is that request's 400 or 500; no worker restarts."""
    server = start(config=_explode_config(tmp_path), env={"SOUNDING_DECODE_WORKERS": "1"})
    statuses: list[int] = []
    acked: list[str] = []
    stop = threading.Event()

    def good_sender() -> None:
        while not stop.is_set() and len(statuses) < 400:
            trace_id = random_trace_id()
            response = post(server, trace_request(bytes.fromhex(trace_id), spans=100))
            statuses.append(response.status_code)
            if response.status_code == 202:
                acked.append(trace_id)

    sender = threading.Thread(target=good_sender)
    sender.start()
    deadline = time.monotonic() + 30
    while not statuses:  # the first body started the worker
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.05)
    (worker,) = _workers(server)
    try:
        deep = b"[" * 10_000 + b"]" * 10_000
        for _ in range(3):
            response = post(server, deep, "application/json")
            assert response.status_code == 400, response.text
            assert "nested deeper than 128 levels" in response.text
            for name in ("boom", "boom-recursion", "boom-memory"):
                response = post(server, _named(name))
                assert response.status_code == 500, (name, response.text)
                assert "not stored" in response.json()["error"]
    finally:
        stop.set()
        sender.join(60)
    assert statuses and set(statuses) == {202}, sorted(set(statuses))
    assert _restarts(server) == 0
    assert _workers(server) == [worker]
    assert set(server.spans_per_trace()) == set(acked)
    # Logged once per kind, not per request.
    log = server.log()
    assert log.count("processor explode: RuntimeError") == 1, log
    assert log.count("processor explode: RecursionError") == 1, log
    assert log.count("processor explode: MemoryError") == 1, log
    server.output.clear()  # those lines are the point of this test


def test_the_request_a_worker_died_on_is_500_and_those_queued_behind_it_503(
        start: Callable[..., Server], tmp_path: Path) -> None:
    """A worker killed while handling a request (boom-slow holds it there): that
    request, perhaps what killed it, is answered 500 and not retried in another
    worker; the requests queued behind it are 503 + Retry-After, to be retried."""
    server = start(config=_explode_config(tmp_path), env={"SOUNDING_DECODE_WORKERS": "1"})
    # A body refused in the worker starts it and stores nothing.
    assert post(server, b"\xff\xff not protobuf").status_code == 400
    (worker,) = _workers(server)
    answers: dict[str, requests.Response] = {}

    def send(label: str, body: bytes) -> None:
        answers[label] = post(server, body)

    first = threading.Thread(target=send, args=("handled", _named("boom-slow")))
    first.start()
    time.sleep(1.0)  # the worker is inside boom-slow's 3 s
    queued = [threading.Thread(target=send, args=(f"queued-{i}", _named("fine")))
              for i in range(3)]
    for thread in queued:
        thread.start()
    time.sleep(0.5)
    os.kill(worker, signal.SIGKILL)
    for thread in (first, *queued):
        thread.join(30)
    assert answers["handled"].status_code == 500, answers["handled"].text
    for i in range(3):
        response = answers[f"queued-{i}"]
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"] == "1"
    assert server.spans_per_trace() == {}
    assert _restarts(server) == 1
    deadline = time.monotonic() + 30
    while _workers(server) in ([], [worker]):
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)
    assert post(server, _named("fine")).status_code == 202
    server.output.clear()  # the worker's death is logged, as it should be


def refusing_builder(name: str, settings: Any) -> Any:
    """A processor builder that a worker can be handed but that fails there, so that the
    worker cannot start."""
    raise RuntimeError(f"no processor {name} in this worker")


def test_a_worker_that_cannot_start_is_503_and_tried_again_after_a_backoff_only() -> None:
    body = trace_request(bytes.fromhex(random_trace_id()), spans=2)

    async def run() -> list[str]:
        pool = DecodePool([("classify", {})], [None], workers=2, min_bytes=0,
                          max_bytes=1 << 24,
                          build_processor=refusing_builder)
        await pool.start()  # the functions can be handed over: no process yet
        assert pool._started_count == 0
        answers = []
        try:
            for _ in range(5):  # one start tried, then refused without forking per request
                try:
                    await pool.submit(decode_traces_body, (True,),
                                      Batch(1, approx_bytes=len(body)), "spans", body)
                except StoreUnavailable as exc:
                    answers.append(str(exc))
            assert pool._started_count == 1
            await asyncio.sleep(0.3)  # past the first backoff (0.1 s)
            with pytest.raises(StoreUnavailable):
                await pool.submit(decode_traces_body, (True,),
                                  Batch(1, approx_bytes=len(body)), "spans", body)
            assert pool._started_count == 2
            assert pool.in_flight.bytes == 0
        finally:
            await pool.shutdown()
        return answers

    answers = asyncio.run(run())
    assert answers[0] == "a decode worker could not start; retry"
    assert answers[1:] == ["the decode workers are restarting"] * 4
