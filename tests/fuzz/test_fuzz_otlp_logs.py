"""Fuzzing the OTLP logs doors, `/ingest/v1/logs`, `/v1/logs` on the standard
OTLP/HTTP port and LogsService/Export, with OTLP/JSON and protobuf bodies, plain and
compressed, against the real server (bodies on both sides of `decode_min_bytes`, so
through the event loop and through a decode worker). A valid record sent beside odd
ones is stored whenever the rules oblige the door to keep it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import proto_strategies as ps
from tests.fuzz import strategies as s
from tests.fuzz.doors import call_raw, check_grpc, check_http, expect, fuzz, log_stored, post
from tests.support.server import Server

JSON = "application/json"
PROTOBUF = "application/x-protobuf"
EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


def door(server: Server, standard_port: bool) -> tuple[str, str]:
    if standard_port:
        return "otlp_http /v1/logs", server.urls[1] + "/v1/logs"
    return "/ingest/v1/logs", server.base + "/ingest/v1/logs"


def send(server: Server, session: requests.Session, standard_port: bool, data: bytes,
         content_type: str, encoding: str | None = None) -> int:
    name, url = door(server, standard_port)
    headers = {"Authorization": f"Bearer {server.key}", "Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    return check_http(name, post(session, url, s.encode(data, encoding), headers), data)


def keeps(server: Server, name: str, data: bytes, ok: bool, trace_id: str, must_keep: bool,
          intact: bool = True) -> None:
    if must_keep:
        expect(ok, name, data, ok, "a valid log record beside invalid ones was not accepted")
    if ok and intact:
        expect(log_stored(server, trace_id), name, data, ok,
               "accepted, but the valid log record is not stored")


def json_record(trace_id: str | None = None) -> dict[str, Any]:
    return {
        "timeUnixNano": "1700000000000000000", "observedTimeUnixNano": "1700000000000000001",
        "severityNumber": 17, "severityText": "ERROR", "traceId": trace_id or s.marker(),
        "spanId": "eee19b7ec3c1b174", "flags": 1, "eventName": "e",
        "body": {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}},
        "attributes": [{"key": "a.int", "value": {"intValue": "7"}},
                       {"key": "a.list", "value": {"arrayValue": {"values": [
                           {"doubleValue": 0.5}]}}}],
        "droppedAttributesCount": 1,
    }


def json_logs(*records: Any, service: str = "fuzz") -> dict[str, Any]:
    return {"resourceLogs": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeLogs": [{"scope": {"name": "lib"}, "logRecords": list(records)}]}]}


@fuzz(40)
@given(mutated=s.mutations(json_record()), standard_port=st.booleans(),
       encoding=st.sampled_from([None, None, "gzip", "zstd", "deflate"]))
def test_json_record_mutations_keep_the_valid_record(
        fuzz_server: Server, session: requests.Session, mutated: s.Mutated,
        standard_port: bool, encoding: str | None) -> None:
    trace_id = uuid.uuid4().hex
    body = json_logs(mutated.body)
    body["resourceLogs"] += json_logs(json_record(trace_id))["resourceLogs"]
    data = s.dumps(body)
    status = send(fuzz_server, session, standard_port, data, JSON, encoding)
    must_keep = s.depth_of(body) <= s.BODY_MAX_DEPTH and not s.refusable(body)
    keeps(fuzz_server, door(fuzz_server, standard_port)[0], data, status == 202, trace_id,
          must_keep)


@fuzz(20)
@given(mutated=s.mutations(json_logs(json_record(), json_record())),
       standard_port=st.booleans())
def test_json_envelope_mutations(fuzz_server: Server, session: requests.Session,
                                 mutated: s.Mutated, standard_port: bool) -> None:
    send(fuzz_server, session, standard_port, s.dumps(mutated.body), JSON)


@fuzz(40)
@given(case=ps.log_requests(), standard_port=st.booleans(),
       encoding=st.sampled_from([None, None, "gzip", "zstd"]))
def test_protobuf_keeps_the_valid_record(fuzz_server: Server, session: requests.Session,
                                         case: ps.ProtoCase, standard_port: bool,
                                         encoding: str | None) -> None:
    status = send(fuzz_server, session, standard_port, case.body, PROTOBUF, encoding)
    keeps(fuzz_server, door(fuzz_server, standard_port)[0], case.body, status == 202,
          case.sentinel, case.must_keep, case.intact)


@fuzz(30)
@given(case=ps.log_requests(), compress=st.booleans())
def test_grpc_export_keeps_the_valid_record(fuzz_server: Server, case: ps.ProtoCase,
                                            compress: bool) -> None:
    with grpc.insecure_channel(fuzz_server.grpc_target) as channel:
        outcome = call_raw(channel, EXPORT, case.body, fuzz_server.key, compress)
    code = check_grpc(EXPORT, outcome, case.body)
    keeps(fuzz_server, EXPORT, case.body, code == grpc.StatusCode.OK, case.sentinel,
          case.must_keep, case.intact)
