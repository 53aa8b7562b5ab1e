"""POST /ingest/v1/logs (and /v1/logs on the OTLP/HTTP port) against the real
server: protobuf and OTLP/JSON, every compression, authentication, media types,
size limits, records dropped alone, 400s naming the field, a retried request
stored once, and large bodies decoded by a decode worker."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import zstandard
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

from tests.receiver.logs_helpers import (
    accepted_logs,
    dropped_logs,
    log_pb,
    logs_request,
    stored_logs,
)
from tests.receiver.otlp_helpers import EVERY_KIND, deflate_raw, random_trace_id
from tests.support.server import Server, start_server

LIMIT = 256 * 1024
# Bodies from this size on go to the decode worker.
DECODE_MIN_BYTES = 4096
PATH = "/ingest/v1/logs"
PROTOBUF = "application/x-protobuf"


@pytest.fixture(scope="module")
def otlp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One SQLite collector for the module, with a small body limit, a decode worker
    and the OTLP/HTTP port. Tests use their own trace ids."""
    path = tmp_path_factory.mktemp("logs") / "sounding.db"
    server = start_server(f"sqlite:///{path}", wait_for=2, env={
        "SOUNDING_MAX_BODY_BYTES": str(LIMIT), "SOUNDING_DECODE_WORKERS": "1",
        "SOUNDING__SERVICE__DECODE_MIN_BYTES": str(DECODE_MIN_BYTES),
        "SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true"})
    yield server
    assert server.stop() == 0, server.log()
    assert "Traceback" not in server.log(), server.log()


def post(server: Server, body: bytes, content_type: str = PROTOBUF, url: str | None = None,
         **headers: str) -> requests.Response:
    return requests.post(url or server.base + PATH, data=body, timeout=30, headers={
        "Authorization": f"Bearer {server.key}", "Content-Type": content_type, **headers})


def proto_body(trace_id: str, *texts: str) -> bytes:
    return logs_request(*(log_pb(trace_id, text) for text in texts)).SerializeToString()


def json_record(trace_id: str, text: str, **fields: Any) -> dict[str, Any]:
    return {"traceId": trace_id, "timeUnixNano": "1795168800000000000",
            "body": {"stringValue": text}, **fields}


def json_body(*records: dict[str, Any]) -> bytes:
    return json.dumps({"resourceLogs": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "web"}}]},
        "scopeLogs": [{"scope": {"name": "lib"}, "logRecords": list(records)}]}]}).encode()


def test_protobuf_records_are_stored_with_every_field(otlp: Server) -> None:
    trace_id = random_trace_id()
    record = log_pb(trace_id, flags=1, event_name="order.placed", dropped_attributes_count=2,
                    observed_time_unix_nano=1_795_168_800_000_000_007)
    record.attributes.add(key="order.id", value=EVERY_KIND["a.int"][0])
    record.body.kvlist_value.values.add(key="k", value=EVERY_KIND["a.bytes"][0])
    before = accepted_logs(otlp)
    response = post(otlp, logs_request(record, service="shop", scope="orders")
                    .SerializeToString())
    assert response.status_code == 202 and response.content == b""
    (stored,) = stored_logs(otlp, trace_id)
    assert stored == {
        "id": stored["id"], "time_ns": 1_795_168_800_000_000_000,
        "observed_ns": 1_795_168_800_000_000_007, "severity_number": 9,
        "severity_text": "INFO", "body": {"k": EVERY_KIND["a.bytes"][1]},
        "attributes": {"order.id": -(2**63)}, "resource": {"service.name": "shop"},
        "service_name": "shop", "scope_name": "orders", "trace_id": trace_id,
        "span_id": "01" * 8, "flags": 1, "event_name": "order.placed",
        "dropped_attributes_count": 2, "unreadable": []}
    assert accepted_logs(otlp) == before + 1


def test_otlp_json_is_stored_as_the_same_record(otlp: Server) -> None:
    trace_id = random_trace_id()
    assert post(otlp, json_body(json_record(
        trace_id, "hello", spanId="01" * 8, severityNumber="SEVERITY_NUMBER_INFO",
        severityText="INFO")), "application/json").status_code == 202
    (stored,) = stored_logs(otlp, trace_id)
    assert (stored["body"], stored["severity_number"], stored["span_id"],
            stored["service_name"]) == ("hello", 9, "01" * 8, "web")
    # The time received stands in for the observed time the client left unset.
    assert stored["observed_ns"] > 1_763_000_000 * 10**9


def test_the_standard_otlp_port_serves_v1_logs(otlp: Server) -> None:
    trace_id = random_trace_id()
    url = otlp.urls[1] + "/v1/logs"
    assert post(otlp, proto_body(trace_id, "std"), url=url).status_code == 202
    assert [r["body"] for r in stored_logs(otlp, trace_id)] == ["std"]
    assert requests.post(url, data=b"", timeout=10,
                         headers={"Content-Type": PROTOBUF}).status_code == 401


@pytest.mark.parametrize(("encoding", "pack"), [
    ("gzip", gzip.compress), ("deflate", zlib.compress), ("deflate", deflate_raw),
    ("zstd", zstandard.ZstdCompressor().compress),
])
def test_compressed_bodies_are_inflated(otlp: Server, encoding: str, pack: Any) -> None:
    trace_id = random_trace_id()
    response = post(otlp, pack(proto_body(trace_id, "zipped")),
                    **{"Content-Encoding": encoding})
    assert response.status_code == 202, response.text
    assert [r["body"] for r in stored_logs(otlp, trace_id)] == ["zipped"]


def test_a_missing_or_wrong_key_is_401_and_stores_nothing(otlp: Server) -> None:
    trace_id = random_trace_id()
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = requests.post(otlp.base + PATH, data=proto_body(trace_id, "x"), timeout=10,
                                 headers={"Content-Type": PROTOBUF, **headers})
        assert response.status_code == 401
    assert stored_logs(otlp, trace_id) == []


@pytest.mark.parametrize("content_type", ["text/plain", "application/grpc", None])
def test_other_media_types_are_415(otlp: Server, content_type: str | None) -> None:
    headers = {"Authorization": f"Bearer {otlp.key}"}
    if content_type:
        headers["Content-Type"] = content_type
    response = requests.post(otlp.base + PATH, data=b"{}", headers=headers, timeout=10)
    assert response.status_code == 415


def test_a_body_past_the_limit_is_413(otlp: Server) -> None:
    assert post(otlp, b"\x00" * (LIMIT + 1)).status_code == 413
    bomb = gzip.compress(b"\x00" * (LIMIT * 40))
    response = post(otlp, bomb, **{"Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert "after decompression" in response.json()["error"]


def test_a_record_that_cannot_be_kept_is_dropped_alone_and_counted(otlp: Server) -> None:
    trace_id = random_trace_id()
    before = dropped_logs(otlp)
    bad = json_record(trace_id, "bad", severityNumber=99)
    response = post(otlp, json_body(json_record(trace_id, "good"), bad), "application/json")
    assert response.status_code == 202
    # OTLP's partial success, in the request's media type.
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {"partialSuccess": {
        "rejectedLogRecords": "1",
        "errorMessage": "resourceLogs[0].scopeLogs[0].logRecords[1]: "
                        "severityNumber must be 0 to 24, got 99"}}
    assert [r["body"] for r in stored_logs(otlp, trace_id)] == ["good"]
    assert dropped_logs(otlp) == before + 1
    # Alone in its request, the same record is a 400 naming the record and the problem.
    response = post(otlp, json_body(bad), "application/json")
    assert response.status_code == 400
    assert response.json()["details"] == [{
        "field": "resourceLogs[0].scopeLogs[0].logRecords[0]",
        "error": "severityNumber must be 0 to 24, got 99"}]


@pytest.mark.parametrize(("body", "content_type", "field"), [
    (b"\xff\xff\xff\xff", PROTOBUF, "body"),
    (b"{not json", "application/json", "body"),
    (b"[1, 2]", "application/json", "body"),
    (b'{"resourceLogs": {"a": 1}}', "application/json", "resourceLogs"),
    (b'{"resourceLogs": [{"scopeLogs": [{"logRecords": 3}]}]}', "application/json",
     "resourceLogs[0].scopeLogs[0].logRecords"),
])
def test_malformed_bodies_are_400_naming_the_field_and_store_nothing(
        otlp: Server, body: bytes, content_type: str, field: str) -> None:
    before = otlp.query("SELECT count(*) FROM logs")[0][0]
    response = post(otlp, body, content_type)
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == field
    assert otlp.query("SELECT count(*) FROM logs")[0][0] == before


def test_a_retried_request_is_stored_once(otlp: Server) -> None:
    trace_id = random_trace_id()
    body = proto_body(trace_id, "once", "twice the same? no: another record")
    for _ in range(3):
        assert post(otlp, body).status_code == 202
    assert len(stored_logs(otlp, trace_id)) == 2
    json_request = json_body(json_record(trace_id, "json once"))
    for _ in range(2):
        assert post(otlp, json_request, "application/json").status_code == 202
    assert len(stored_logs(otlp, trace_id)) == 3


def offloaded(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r"^sounding_decode_offloaded_requests_total (\S+)", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def test_a_large_body_is_decoded_in_a_decode_worker(otlp: Server) -> None:
    trace_id = random_trace_id()
    offloaded_before = offloaded(otlp)
    texts = [f"record {i} " + "x" * 40 for i in range(200)]
    body = proto_body(trace_id, *texts)
    assert len(body) >= DECODE_MIN_BYTES
    bad = log_pb(trace_id, "bad", severity_number=30)
    request = logs_request(*(log_pb(trace_id, text) for text in texts), bad)
    before = dropped_logs(otlp)
    response = post(otlp, request.SerializeToString())
    assert response.status_code == 202
    assert response.headers["Content-Type"] == PROTOBUF
    reply = ExportLogsServiceResponse.FromString(response.content)
    assert reply.partial_success.rejected_log_records == 1
    assert sorted(r["body"] for r in stored_logs(otlp, trace_id)) == sorted(texts)
    assert dropped_logs(otlp) == before + 1
    assert offloaded(otlp) == offloaded_before + 1
    # And a large request whose every record is dropped is a 400 from the worker.
    request = logs_request(*([bad] * 100))
    assert len(request.SerializeToString()) >= DECODE_MIN_BYTES
    response = post(otlp, request.SerializeToString())
    assert response.status_code == 400
    assert "severityNumber" in response.json()["details"][0]["error"]
