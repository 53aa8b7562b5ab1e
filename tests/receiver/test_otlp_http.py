"""POST /ingest/v1/traces against the real server: media types, OTLP/JSON as the
OTLP specification writes it, compression, bounded decompression, malformed
bodies, spans dropped one by one, and CORS."""

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
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from tests.receiver.otlp_helpers import (
    deflate_raw,
    random_trace_id,
    request_of,
    span_pb,
    stored_spans,
)
from tests.support.server import Server, start_server

ORIGIN = "https://shop.example"
LIMIT = 256 * 1024
PATH = "/ingest/v1/traces"


@pytest.fixture(scope="module")
def otlp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One SQLite collector for the module, with a CORS origin and a small body limit.
    Tests use their own trace ids, so they do not see each other's spans."""
    path = tmp_path_factory.mktemp("otlp") / "sounding.db"
    server = start_server(f"sqlite:///{path}", env={"SOUNDING_CORS_ORIGINS": ORIGIN,
                                                     "SOUNDING_MAX_BODY_BYTES": str(LIMIT)})
    yield server
    assert server.stop() == 0, server.log()
    assert "Traceback" not in server.log(), server.log()


def post(server: Server, body: bytes, content_type: str = "application/x-protobuf",
         path: str = PATH, **headers: str) -> requests.Response:
    return requests.post(server.base + path, data=body, timeout=30, headers={
        "Authorization": f"Bearer {server.key}", "Content-Type": content_type, **headers})


def proto_body(trace_id: str, *span_ids: str) -> bytes:
    return request_of(*(span_pb(trace_id, s) for s in span_ids)).SerializeToString()


def json_body(*spans: dict[str, Any], resource: list[Any] | None = None) -> bytes:
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": resource or [
            {"key": "service.name", "value": {"stringValue": "web"}}]},
        "scopeSpans": [{"scope": {"name": "lib"}, "spans": list(spans)}]}]}).encode()


def dropped_spans(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r'^sounding_records_dropped_total\{reason="invalid",signal="spans"\} (\S+)',
                      text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


# --- media types ----------------------------------------------------------------

@pytest.mark.parametrize("content_type", [
    "application/x-protobuf", "application/x-protobuf; charset=binary",
    "Application/X-Protobuf",
])
def test_protobuf_is_accepted_with_parameters(otlp: Server, content_type: str) -> None:
    trace_id = random_trace_id()
    response = post(otlp, proto_body(trace_id, "00000000000000a1"), content_type)
    assert response.status_code == 202
    assert response.content == b""
    assert [s["span_id"] for s in stored_spans(otlp, trace_id)] == ["00000000000000a1"]


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8"])
def test_json_is_accepted_with_parameters(otlp: Server, content_type: str) -> None:
    trace_id = random_trace_id()
    body = json_body({"traceId": trace_id, "spanId": "00000000000000b1", "name": "j"})
    assert post(otlp, body, content_type).status_code == 202
    assert [s["name"] for s in stored_spans(otlp, trace_id)] == ["j"]


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/protobuf",
                                          "application/xml", "multipart/form-data"])
def test_other_media_types_are_415(otlp: Server, content_type: str | None) -> None:
    headers = {"Authorization": f"Bearer {otlp.key}"}
    if content_type:
        headers["Content-Type"] = content_type
    response = requests.post(otlp.base + PATH, data=b"{}", headers=headers, timeout=10)
    assert response.status_code == 415
    assert "application/x-protobuf" in response.json()["error"]


def test_missing_key_is_401(otlp: Server) -> None:
    response = requests.post(otlp.base + PATH, data=proto_body(random_trace_id(), "1" * 16),
                             headers={"Content-Type": "application/x-protobuf"}, timeout=10)
    assert response.status_code == 401


# --- OTLP/JSON as the specification writes it ------------------------------------

def test_otlp_json_in_every_form_the_specification_allows(otlp: Server) -> None:
    trace_id = random_trace_id()
    every_kind = [
        {"key": "s", "value": {"stringValue": "text"}},
        {"key": "b", "value": {"boolValue": True}},
        {"key": "i.str", "value": {"intValue": "-9223372036854775808"}},
        {"key": "i.num", "value": {"intValue": 42}},
        {"key": "d", "value": {"doubleValue": 2.5}},
        {"key": "d.str", "value": {"doubleValue": "0.125"}},
        {"key": "d.nan", "value": {"doubleValue": "NaN"}},
        {"key": "bytes", "value": {"bytesValue": "AP9iaW4="}},
        {"key": "arr", "value": {"arrayValue": {"values": [{"stringValue": "a"},
                                                          {"intValue": "7"}]}}},
        {"key": "kv", "value": {"kvlistValue": {"values": [
            {"key": "in", "value": {"boolValue": False}}]}}},
        {"key": "empty", "value": {}},
    ]
    camel = {  # lowerCamelCase, 64-bit integers as strings, enums as integers
        "traceId": trace_id.upper(), "spanId": "00000000000000C1", "parentSpanId": "",
        "name": "camel", "kind": 2, "startTimeUnixNano": "1763000000123456789",
        "endTimeUnixNano": "1763000000987654321", "attributes": every_kind,
        "status": {"code": 2, "message": "bad"}, "traceState": "x=1", "flags": 1,
        "droppedAttributesCount": 0, "aFieldFromTheFuture": {"nested": [1]},
    }
    snake = {  # the proto field names, 64-bit integers as numbers, enums as names
        "trace_id": trace_id, "span_id": "00000000000000c2",
        "parent_span_id": "00000000000000c1", "name": "snake", "kind": "SPAN_KIND_CLIENT",
        "start_time_unix_nano": 1763000000123456789, "end_time_unix_nano": 1763000000987654321,
        "attributes": [{"key": "x", "value": {"string_value": "y"}}],
        "status": {"code": "STATUS_CODE_OK"},
    }
    resource = [{"key": "service.name", "value": {"stringValue": "json-svc"}},
                {"key": "host.cpus", "value": {"intValue": "16"}}]
    assert post(otlp, json_body(camel, snake, resource=resource),
                "application/json").status_code == 202
    stored = {s["name"]: s for s in stored_spans(otlp, trace_id)}
    assert stored["camel"] == {
        "trace_id": trace_id, "span_id": "00000000000000c1", "parent_span_id": "",
        "name": "camel", "kind": 2, "start_ns": 1763000000123456789,
        "end_ns": 1763000000987654321, "status_code": 2, "status_message": "bad",
        "scope_name": "lib", "resource": {"service.name": "json-svc", "host.cpus": 16},
        "attributes": {"s": "text", "b": True, "i.str": -(2**63), "i.num": 42, "d": 2.5,
                       "d.str": 0.125, "d.nan": "NaN", "bytes": "AP9iaW4=", "arr": ["a", 7],
                       "kv": {"in": False}, "empty": None},
    }
    assert stored["snake"]["parent_span_id"] == "00000000000000c1"
    assert (stored["snake"]["kind"], stored["snake"]["status_code"]) == (3, 1)
    assert stored["snake"]["start_ns"] == 1763000000123456789
    assert stored["snake"]["attributes"] == {"x": "y"}


@pytest.mark.parametrize(("span_changes", "problem"), [
    ({"traceId": "AQIDBAUGBwgJCgsMDQ4PEA=="}, "32 hexadecimal"),  # base64, as json_format writes
    ({"traceId": ""}, "empty or all zero"),
    ({"traceId": "0" * 32}, "empty or all zero"),
    ({"spanId": "abc"}, "16 hexadecimal"),
    ({"spanId": ""}, "empty or all zero"),
    ({"parentSpanId": "12"}, "16 hexadecimal"),
    ({"traceId": "g" * 32}, "32 hexadecimal"),
    ({"startTimeUnixNano": "1.5"}, "unsigned integer"),
    ({"startTimeUnixNano": "١٢"}, "unsigned integer"),  # Arabic-Indic digits are not OTLP
    ({"kind": "SERVER"}, "enum"),
    ({"attributes": [{"key": "i", "value": {"intValue": "1_000"}}]}, "unreadable"),
    ({"attributes": [{"key": "i", "value": {"intValue": "9223372036854775808"}}]},
     "unreadable"),
])
def test_a_span_that_cannot_be_kept_is_dropped_alone_and_counted(
        otlp: Server, span_changes: dict[str, Any], problem: str) -> None:
    trace_id = random_trace_id()
    good = {"traceId": trace_id, "spanId": "00000000000000d1", "name": "good"}
    bad = {"traceId": trace_id, "spanId": "00000000000000d2", "name": "bad", **span_changes}
    before = dropped_spans(otlp)
    assert post(otlp, json_body(good, bad), "application/json").status_code == 202
    assert [s["name"] for s in stored_spans(otlp, trace_id)] == ["good"]
    assert dropped_spans(otlp) == before + 1
    # Alone in its request, the same span is a 400 that names the problem.
    response = post(otlp, json_body(bad), "application/json")
    assert response.status_code == 400
    assert any(problem in d["error"] for d in response.json()["details"]), response.json()


def test_protobuf_spans_with_bad_ids_are_dropped_alone(otlp: Server) -> None:
    trace_id = random_trace_id()
    bad = span_pb(trace_id, "00000000000000e2")
    bad.span_id = b"\x01\x02"
    before = dropped_spans(otlp)
    body = request_of(span_pb(trace_id, "00000000000000e1"), bad).SerializeToString()
    response = post(otlp, body)
    assert response.status_code == 202
    # OTLP's partial success, as the OTLP/HTTP specification writes it.
    assert response.headers["Content-Type"] == "application/x-protobuf"
    reply = ExportTraceServiceResponse.FromString(response.content)
    assert reply.partial_success.rejected_spans == 1
    assert "spanId" in reply.partial_success.error_message
    assert [s["span_id"] for s in stored_spans(otlp, trace_id)] == ["00000000000000e1"]
    assert dropped_spans(otlp) == before + 1


@pytest.mark.parametrize(("body", "content_type"), [
    (b"\xff\xff\xff\xff", "application/x-protobuf"),
    (b"\x0a\x05\x0a", "application/x-protobuf"),  # truncated
    (b"{not json", "application/json"),
    (b"[1, 2]", "application/json"),
    (b'{"resourceSpans": {"a": 1}}', "application/json"),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": 3}]}]}', "application/json"),
    (b"\xff\xfe", "application/json"),
])
def test_malformed_bodies_are_400_and_store_nothing(otlp: Server, body: bytes,
                                                    content_type: str) -> None:
    before = otlp.query("SELECT count(*) FROM spans")[0][0]
    response = post(otlp, body, content_type)
    assert response.status_code == 400
    assert response.json()["error"]
    assert otlp.query("SELECT count(*) FROM spans")[0][0] == before


# --- compression -----------------------------------------------------------------

@pytest.mark.parametrize(("encoding", "pack"), [
    ("gzip", gzip.compress), ("x-gzip", gzip.compress), ("deflate", zlib.compress),
    ("deflate", deflate_raw), ("zstd", zstandard.ZstdCompressor().compress),
    ("identity", lambda data: data),
])
def test_compressed_bodies_are_inflated(otlp: Server, encoding: str, pack: Any) -> None:
    trace_id = random_trace_id()
    response = post(otlp, pack(proto_body(trace_id, "00000000000000f1")),
                    **{"Content-Encoding": encoding})
    assert response.status_code == 202, response.text
    assert len(stored_spans(otlp, trace_id)) == 1


@pytest.mark.parametrize(("encoding", "pack"), [
    ("gzip", gzip.compress), ("deflate", zlib.compress), ("zstd", zstandard.compress),
])
def test_a_small_body_inflating_past_the_limit_is_413(otlp: Server, encoding: str,
                                                      pack: Any) -> None:
    # Zeros compress about a thousandfold: a few kilobytes on the wire, 40 times the
    # limit once inflated.
    bomb = pack(b"\x00" * (LIMIT * 40))
    assert len(bomb) < LIMIT // 4
    response = post(otlp, bomb, **{"Content-Encoding": encoding})
    assert response.status_code == 413
    assert "after decompression" in response.json()["error"]


def test_a_body_within_the_limit_once_inflated_is_accepted(otlp: Server) -> None:
    trace_id = random_trace_id()
    request = request_of(span_pb(trace_id, "00000000000000f2", name="n" * (LIMIT // 2)))
    assert post(otlp, gzip.compress(request.SerializeToString()),
                **{"Content-Encoding": "gzip"}).status_code == 202


@pytest.mark.parametrize(("encoding", "body", "status"), [
    ("compress", b"\x1f\x9d\x90", 415),
    ("br", b"not brotli", 400),
    ("gzip", b"not gzip at all", 400),
    # mtime=0: a fixed id for the parameter, the same in every pytest-xdist worker.
    ("gzip", gzip.compress(b"\x0a\x00" * 100, mtime=0)[:-12], 400),  # truncated stream
    ("zstd", b"not zstd", 400),
])
def test_unknown_or_broken_encodings(otlp: Server, encoding: str, body: bytes,
                                     status: int) -> None:
    response = post(otlp, body, **{"Content-Encoding": encoding})
    assert response.status_code == status
    assert response.json()["error"]


# --- CORS ------------------------------------------------------------------------

def preflight(server: Server, origin: str) -> requests.Response:
    return requests.options(server.base + PATH, timeout=10, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type"})


def test_a_configured_origin_gets_a_correct_preflight_and_response(otlp: Server) -> None:
    response = preflight(otlp, ORIGIN)
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    allowed = response.headers["Access-Control-Allow-Headers"].lower()
    assert "authorization" in allowed and "content-type" in allowed
    assert "Origin" in response.headers["Vary"]
    trace_id = random_trace_id()
    body = json_body({"traceId": trace_id, "spanId": "0000000000000101", "name": "browser"})
    posted = post(otlp, body, "application/json", Origin=ORIGIN)
    assert posted.status_code == 202
    assert posted.headers["Access-Control-Allow-Origin"] == ORIGIN
    # A browser must be able to read the reason of a refusal too.
    refused = post(otlp, b"{", "application/json", Origin=ORIGIN)
    assert refused.status_code == 400
    assert refused.headers["Access-Control-Allow-Origin"] == ORIGIN


def test_an_origin_not_configured_gets_no_cors_headers(otlp: Server) -> None:
    response = preflight(otlp, "https://evil.example")
    assert "Access-Control-Allow-Origin" not in response.headers
    assert "Access-Control-Allow-Methods" not in response.headers
    posted = post(otlp, b"{}", "application/json", Origin="https://evil.example")
    assert "Access-Control-Allow-Origin" not in posted.headers


def test_cors_is_off_by_default(shared_server: Server) -> None:
    response = preflight(shared_server, ORIGIN)
    assert "Access-Control-Allow-Origin" not in response.headers
    assert "Access-Control-Allow-Methods" not in response.headers


# --- values at the door: times, 32-bit enums, attribute depth (docs/sending-data.md, "Limits") -

def nested_value(levels: int) -> dict[str, Any]:
    """An OTLP/JSON AnyValue holding `levels` arrays and key-value lists in turn."""
    value: dict[str, Any] = {"stringValue": "leaf"}
    for level in range(levels):
        value = ({"arrayValue": {"values": [value]}} if level % 2 else
                 {"kvlistValue": {"values": [{"key": f"k{level}", "value": value}]}})
    return value


TOO_LARGE = [
    ({"startTimeUnixNano": "9223372036854775808"}, "2^63"),
    ({"endTimeUnixNano": "18446744073709551615"}, "2^63"),
    ({"startTimeUnixNano": 9223372036854775808}, "2^63"),
    ({"events": [{"name": "e", "timeUnixNano": "9223372036854775808"}]}, "2^63"),
    ({"kind": 1e22}, "kind"),
    ({"kind": 10000000000000000000000}, "kind"),
    ({"kind": 2**31}, "kind"),
    ({"status": {"code": 1e22}}, "status.code"),
    ({"status": {"code": 10000000000000000000000}}, "status.code"),
    ({"attributes": [{"key": "deep", "value": nested_value(17)}]}, "deeper than 16"),
    ({"events": [{"name": "e", "attributes": [{"key": "deep", "value": nested_value(17)}]}]},
     "deeper than 16"),
]


@pytest.mark.parametrize(("span_changes", "problem"), TOO_LARGE)
def test_a_json_span_with_a_value_out_of_range_is_dropped_alone(
        otlp: Server, span_changes: dict[str, Any], problem: str) -> None:
    trace_id = random_trace_id()
    good = {"traceId": trace_id, "spanId": "00000000000000f1", "name": "good",
            "startTimeUnixNano": str(2**63 - 1), "endTimeUnixNano": str(2**63 - 1)}
    bad = {"traceId": trace_id, "spanId": "00000000000000f2", "name": "bad", **span_changes}
    before = dropped_spans(otlp)
    response = post(otlp, json_body(good, bad), "application/json")
    assert response.status_code == 202, response.text
    assert [s["name"] for s in stored_spans(otlp, trace_id)] == ["good"]
    assert dropped_spans(otlp) == before + 1
    response = post(otlp, json_body(bad), "application/json")
    assert response.status_code == 400
    assert any(problem in d["error"] for d in response.json()["details"]), response.json()


def test_attributes_nested_101_levels_exceed_the_body_depth_and_are_a_400(otlp: Server) -> None:
    # 101 AnyValue levels are over 128 JSON levels: the body's own limit answers first.
    trace_id = random_trace_id()
    body = json_body({"traceId": trace_id, "spanId": "00000000000000f6",
                      "attributes": [{"key": "deep", "value": nested_value(101)}]})
    response = post(otlp, body, "application/json")
    assert response.status_code == 400
    assert response.json()["details"] == [{"field": "body",
                                           "error": "nested deeper than 128 levels"}]
    assert stored_spans(otlp, trace_id) == []


def test_a_resource_nested_too_deep_is_a_400(otlp: Server) -> None:
    body = json_body({"traceId": random_trace_id(), "spanId": "00000000000000f3"},
                     resource=[{"key": "deep", "value": nested_value(17)}])
    response = post(otlp, body, "application/json")
    assert response.status_code == 400
    assert "deeper than 16" in response.json()["details"][0]["error"]


@pytest.mark.parametrize("field", ["start_time_unix_nano", "end_time_unix_nano", "event"])
def test_a_protobuf_span_time_of_2_to_the_63_or_more_is_dropped_alone(otlp: Server,
                                                                      field: str) -> None:
    trace_id = random_trace_id()
    bad = span_pb(trace_id, "00000000000000f5")
    if field == "event":
        bad.events.add(name="late", time_unix_nano=2**64 - 1)
    else:
        setattr(bad, field, 2**64 - 1)  # fixed64: legal OTLP
    before = dropped_spans(otlp)
    body = request_of(span_pb(trace_id, "00000000000000f4"), bad).SerializeToString()
    assert post(otlp, body).status_code == 202
    assert [s["span_id"] for s in stored_spans(otlp, trace_id)] == ["00000000000000f4"]
    assert dropped_spans(otlp) == before + 1
