"""Fuzzing every gRPC door: OTLP TraceService/Export and Sounding's own services
(proto/sounding/v1/ingest.proto), with odd messages, damaged bytes and random
bytes, against the real server."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from proto.sounding.v1 import ingest_pb2
from tests.fuzz import proto_strategies as ps
from tests.fuzz import strategies as s
from tests.fuzz.doors import (
    call_raw,
    check_grpc,
    error_stored,
    expect,
    fuzz,
    request_stored,
    trace_stored,
)
from tests.fuzz.strategies import uniform
from tests.support.server import Server

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
REPORT = "/sounding.v1.ErrorService/Report"
REPORT_BATCH = "/sounding.v1.ErrorService/ReportBatch"
RECORD_DEPLOY = "/sounding.v1.DeployService/Record"
REQUESTS = "/sounding.v1.RequestService/ReportBatch"
METHODS = [EXPORT, REPORT, REPORT_BATCH, RECORD_DEPLOY, REQUESTS]
OK = grpc.StatusCode.OK


@pytest.fixture(scope="module")
def channel(fuzz_server: Server) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(fuzz_server.grpc_target, options=[
            ("grpc.max_send_message_length", 64 * 1024 * 1024)]) as channel:
        yield channel


@fuzz(40)
@given(case=ps.trace_requests(), compress=st.booleans())
def test_trace_export_keeps_the_valid_span(fuzz_server: Server, channel: grpc.Channel,
                                           case: ps.ProtoCase, compress: bool) -> None:
    outcome = call_raw(channel, EXPORT, case.body, fuzz_server.key, compress)
    code = check_grpc(EXPORT, outcome, case.body)
    if case.must_keep:
        expect(code == OK, EXPORT, case.body, code, "a valid span beside invalid ones was "
                                                    "not accepted")
    if code == OK and case.intact:
        response = ExportTraceServiceResponse.FromString(outcome[1])  # type: ignore[arg-type]
        expect(trace_stored(fuzz_server, case.sentinel), EXPORT, case.body, response,
               "OK, but the valid span is not stored")


def _wire(body: bytes, not_utf8: bool) -> bytes:
    return body.replace(ps.HOLE.encode(), ps.NOT_UTF8) if not_utf8 else body


@fuzz(40)
@given(record=ps.error_records(), not_utf8=st.booleans())
def test_error_report(fuzz_server: Server, channel: grpc.Channel, record: ps.ErrorCase,
                      not_utf8: bool) -> None:
    body = _wire(record.wire, not_utf8)
    check_grpc(REPORT, call_raw(channel, REPORT, body, fuzz_server.key), body)


@fuzz(40)
@given(record=ps.error_records(), not_utf8=st.booleans(), first=st.booleans())
def test_error_batch_keeps_the_valid_items(fuzz_server: Server, channel: grpc.Channel,
                                           record: ps.ErrorCase, not_utf8: bool,
                                           first: bool) -> None:
    fingerprint = s.marker()
    sentinel = ps.valid_error_record(fingerprint).SerializeToString()
    body = _wire(ps.error_batch(*([record.wire, sentinel] if first else
                                  [sentinel, record.wire])), not_utf8)
    outcome = call_raw(channel, REPORT_BATCH, body, fuzz_server.key)
    code = check_grpc(REPORT_BATCH, outcome, body)
    # Only a body the protobuf runtime cannot parse (too deep, not UTF-8) may be refused.
    if record.depth <= ps.PARSEABLE_STRUCT_DEPTH and not (not_utf8 and ps.NOT_UTF8 in body):
        expect(code == OK, REPORT_BATCH, body, code,
               "a valid item beside an invalid one was not accepted")
    if code == OK:
        expect(error_stored(fuzz_server, fingerprint), REPORT_BATCH, body, outcome[1],
               "OK, but the valid item is not stored")


@fuzz(30)
@given(record=ps.deploy_records(), not_utf8=st.booleans())
def test_deploy_record(fuzz_server: Server, channel: grpc.Channel,
                       record: ingest_pb2.DeployRecord, not_utf8: bool) -> None:
    body = _wire(record.SerializeToString(), not_utf8)
    check_grpc(RECORD_DEPLOY, call_raw(channel, RECORD_DEPLOY, body, fuzz_server.key), body)


@fuzz(30)
@given(record=ps.request_metrics(), first=st.booleans())
def test_request_batch_keeps_the_valid_items(fuzz_server: Server, channel: grpc.Channel,
                                             record: ingest_pb2.RequestMetric,
                                             first: bool) -> None:
    route = f"/fuzz/{s.marker()}"
    sentinel = ps.valid_request_metric(route)
    batch = ingest_pb2.RequestBatch(requests=[record, sentinel] if first else [sentinel, record])
    body = batch.SerializeToString()
    outcome = call_raw(channel, REQUESTS, body, fuzz_server.key)
    code = check_grpc(REQUESTS, outcome, body)
    expect(code == OK, REQUESTS, body, code, "a valid item beside an invalid one was not "
                                             "accepted")
    if code == OK:
        expect(request_stored(fuzz_server, route), REQUESTS, body, outcome[1],
               "OK, but the valid item is not stored")


@fuzz(40)
@given(method=st.sampled_from(METHODS), body=uniform(
    st.binary(max_size=512), ps.trace_requests().map(lambda c: c.body),
    ps.error_records().map(lambda r: r.wire)), data=st.data(),
    key=st.sampled_from(["ok", "ok", "ok", "none", "wrong"]))
def test_random_bytes_on_every_method(fuzz_server: Server, channel: grpc.Channel, method: str,
                                      body: bytes, data: st.DataObject, key: str) -> None:
    sent = data.draw(ps.damaged(body, data.draw(st.sampled_from(["truncate", "flip",
                                                                 "insert", "none"]))))
    credential = {"ok": fuzz_server.key, "none": None, "wrong": "snd_nope"}[key]
    code = check_grpc(method, call_raw(channel, method, sent, credential), sent)
    if key != "ok":
        expect(code == grpc.StatusCode.UNAUTHENTICATED, method, sent, code,
               "no valid key, but not UNAUTHENTICATED")
