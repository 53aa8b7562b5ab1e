"""The gRPC receiver against the real server: OTLP TraceService/Export status codes,
authentication, message size, partial success, and UNAVAILABLE with a retry delay
that both kinds of exporter read (and 503 + Retry-After over HTTP, for the same
condition)."""

from __future__ import annotations

import gzip
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
import requests
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from tests.receiver.otlp_helpers import (
    grpc_auth,
    random_trace_id,
    request_of,
    rpc_error,
    span_pb,
    stored_spans,
    trailer,
)
from tests.support.server import Server

RETRY_AFTER = 7
DROPPED = "sounding_records_dropped_total"
INVALID_SPANS = {"reason": "invalid", "signal": "spans"}


@pytest.fixture
def stub_for() -> Iterator[Callable[[Server], trace_service_pb2_grpc.TraceServiceStub]]:
    channels: list[grpc.Channel] = []

    def make(server: Server) -> trace_service_pb2_grpc.TraceServiceStub:
        channels.append(grpc.insecure_channel(server.grpc_target))
        return trace_service_pb2_grpc.TraceServiceStub(channels[-1])

    yield make
    for channel in channels:
        channel.close()


def test_export_stores_the_spans(shared_server: Server, stub_for: Any) -> None:
    trace_id = random_trace_id()
    response = stub_for(shared_server).Export(
        request_of(span_pb(trace_id, "00000000000000a1")), metadata=grpc_auth(shared_server))
    assert not response.HasField("partial_success")
    assert [s["span_id"] for s in stored_spans(shared_server, trace_id)] == ["00000000000000a1"]


@pytest.mark.parametrize("metadata", [(), (("authorization", "Bearer wrong-key"),),
                                      (("authorization", "Basic dXNlcjpwYXNz"),)])
def test_missing_or_unknown_key_is_unauthenticated(shared_server: Server, stub_for: Any,
                                                   metadata: Any) -> None:
    trace_id = random_trace_id()
    error = rpc_error(lambda: stub_for(shared_server).Export(
        request_of(span_pb(trace_id, "00000000000000a2")), metadata=metadata))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
    assert stored_spans(shared_server, trace_id) == []


def test_undecodable_data_is_invalid_argument_with_bad_request_details(
        shared_server: Server) -> None:
    with grpc.insecure_channel(shared_server.grpc_target) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        spans = shared_server.query("SELECT count(*) FROM spans")[0][0]
        error = rpc_error(lambda: export(b"\xff\xff\xff\xff", metadata=grpc_auth(shared_server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    status = status_pb2.Status.FromString(trailer(error, "grpc-status-details-bin"))
    assert status.code == code_pb2.INVALID_ARGUMENT
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert bad_request.field_violations[0].field == "body"
    assert shared_server.query("SELECT count(*) FROM spans")[0][0] == spans


def test_spans_that_cannot_be_kept_are_a_partial_success(shared_server: Server,
                                                         stub_for: Any) -> None:
    trace_id = random_trace_id()
    bad = span_pb(trace_id, "00000000000000b2")
    bad.trace_id = b"\x01" * 4
    stub = stub_for(shared_server)
    dropped = shared_server.metric(DROPPED, **INVALID_SPANS) or 0
    response = stub.Export(request_of(span_pb(trace_id, "00000000000000b1"), bad),
                           metadata=grpc_auth(shared_server))
    assert response.partial_success.rejected_spans == 1
    assert "traceId" in response.partial_success.error_message
    assert [s["span_id"] for s in stored_spans(shared_server, trace_id)] == ["00000000000000b1"]
    assert shared_server.metric(DROPPED, **INVALID_SPANS) == dropped + 1
    # Nothing keepable at all: INVALID_ARGUMENT, as HTTP answers 400.
    error = rpc_error(lambda: stub.Export(request_of(bad), metadata=grpc_auth(shared_server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]


def test_max_message_size_holds_for_plain_and_gzip_calls(start: Any, sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING__RECEIVERS__OTLP_GRPC__MAX_MESSAGE_BYTES": "65536"})
    trace_id = random_trace_id()
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        fits = request_of(span_pb(trace_id, "00000000000000c1", name="n" * 30_000))
        assert stub.Export(fits, metadata=grpc_auth(server), compression=grpc.Compression.Gzip)
        # Compresses to about 1 KiB, inflates to 1 MiB: refused after decompression.
        too_big = request_of(span_pb(trace_id, "00000000000000c2", name="n" * 1_048_576))
        assert len(gzip.compress(too_big.SerializeToString())) < 65536
        for compression in (grpc.Compression.NoCompression, grpc.Compression.Gzip):
            error = rpc_error(lambda c=compression: stub.Export(  # type: ignore[misc]
                too_big, metadata=grpc_auth(server), compression=c))
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
    assert [s["span_id"] for s in stored_spans(server, trace_id)] == ["00000000000000c1"]


def test_the_grpc_listener_can_be_turned_off(start: Any, sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING__RECEIVERS__OTLP_GRPC__ENABLED": "false"})
    assert requests.get(server.base + "/health", timeout=10).status_code == 200
    assert server.stop() == 0
    # "stopped" is the last line: once it is read, the whole log is in.
    _wait_until(lambda: "sounding: stopped" in server.log())
    assert "Sounding listening on http://" in server.log()
    assert "grpc://" not in server.log() and server.grpc_urls == []


# --- overload: UNAVAILABLE with the retry delay, and 503 over HTTP ------------------

def _hold_write_lock(sqlite_url: str) -> sqlite3.Connection:
    """Take SQLite's write lock from outside, so that the collector's writer waits on it."""
    conn = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None,
                           timeout=30)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _wait(futures: list[Any], at_least: int) -> None:
    """Until `at_least` of the calls are answered (those answered while the writer is
    stuck can only be refusals)."""
    _wait_until(lambda: sum(f.done() for f in futures) >= at_least)


def _assert_retry_info_both_ways(error: grpc.RpcError) -> None:
    assert error.code() == grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    # Go exporters (so the Collector): a RetryInfo inside the google.rpc.Status.
    status = status_pb2.Status.FromString(trailer(error, "grpc-status-details-bin"))
    assert status.code == code_pb2.UNAVAILABLE
    retry = error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(retry)
    assert retry.retry_delay.seconds == RETRY_AFTER
    # The Python exporter: the RetryInfo alone, in a trailer of its own.
    raw = error_details_pb2.RetryInfo.FromString(trailer(error, "google.rpc.retryinfo-bin"))
    assert raw.retry_delay.seconds == RETRY_AFTER


def test_overload_is_unavailable_with_retry_info_both_ways_and_503_over_http(
        start: Any, sqlite_url: str) -> None:
    # A queue of one record: while the writer waits on the lock with one batch, one
    # more can wait in the queue, and every call beyond those two is refused.
    server = start(sqlite_url, env={
        "SOUNDING__EXPORTERS__SQL__QUEUE_MAX_RECORDS": "1",
        "SOUNDING__EXPORTERS__SQL__RETRY_AFTER_SECONDS": str(RETRY_AFTER)})
    trace_id = random_trace_id()
    body = [request_of(span_pb(trace_id, f"{n:016x}")) for n in range(1, 9)]
    headers = {"Authorization": f"Bearer {server.key}", "Content-Type": "application/x-protobuf"}
    with grpc.insecure_channel(server.grpc_target) as channel, ThreadPoolExecutor(3) as pool:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        stub.Export(body[0], metadata=grpc_auth(server))  # the key is cached from here on
        lock = _hold_write_lock(sqlite_url)
        try:
            calls = [stub.Export.future(body[n], metadata=grpc_auth(server), timeout=60)
                     for n in range(1, 5)]
            # At most two of the four can be pending: two or more are refused now.
            _wait(calls, at_least=2)
            # The same condition over HTTP: at most one more can wait, so of three
            # requests two or more are refused now.
            posts = [pool.submit(requests.post, f"{server.base}/ingest/v1/traces",
                                 data=body[n].SerializeToString(), headers=headers, timeout=60)
                     for n in range(5, 8)]
            _wait(posts, at_least=2)
        finally:
            lock.rollback()
            lock.close()
        refused_calls = [c.exception() for c in calls if c.exception() is not None]
        responses = [p.result() for p in posts]
    assert len(refused_calls) >= 2
    for error in refused_calls:
        _assert_retry_info_both_ways(error)
    refused_posts = [r for r in responses if r.status_code != 202]
    assert len(refused_posts) >= 2
    for response in refused_posts:
        assert response.status_code == 503
        assert response.headers["Retry-After"] == str(RETRY_AFTER)
    # What was not refused was committed once the lock went; nothing refused was.
    accepted = 1 + (4 - len(refused_calls)) + (3 - len(refused_posts))
    assert len(stored_spans(server, trace_id)) == accepted


def test_a_span_time_of_2_to_the_64_minus_1_is_dropped_alone(shared_server: Server,
                                                             stub_for: Any) -> None:
    trace_id = random_trace_id()
    bad = span_pb(trace_id, "00000000000000c2")
    bad.start_time_unix_nano = 2**64 - 1  # fixed64: legal OTLP, beyond a signed BIGINT
    response = stub_for(shared_server).Export(
        request_of(span_pb(trace_id, "00000000000000c1"), bad), metadata=grpc_auth(shared_server))
    assert response.partial_success.rejected_spans == 1
    assert "2^63" in response.partial_success.error_message
    assert [s["span_id"] for s in stored_spans(shared_server, trace_id)] == ["00000000000000c1"]
