"""Fuzzing the OTLP/HTTP trace doors, `/ingest/v1/traces` on the HTTP port and
`/v1/traces` on the standard OTLP/HTTP port, with OTLP/JSON and protobuf bodies,
plain and compressed, against the real server (bodies on both sides of
`decode_min_bytes`, so through the event loop and through a decode worker)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import proto_strategies as ps
from tests.fuzz import strategies as s
from tests.fuzz.doors import check_http, expect, fuzz, post, trace_stored
from tests.fuzz.strategies import uniform
from tests.support.server import Server

JSON = "application/json"
PROTOBUF = "application/x-protobuf"


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


def door(server: Server, standard_port: bool) -> tuple[str, str]:
    """(name, URL) of one of the two OTLP/HTTP doors."""
    if standard_port:
        return "otlp_http /v1/traces", server.urls[1] + "/v1/traces"
    return "/ingest/v1/traces", server.base + "/ingest/v1/traces"


def send(server: Server, session: requests.Session, standard_port: bool, data: bytes,
         content_type: str, encoding: str | None = None) -> int:
    name, url = door(server, standard_port)
    headers = {"Authorization": f"Bearer {server.key}", "Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    return check_http(name, post(session, url, s.encode(data, encoding), headers), data)


def keeps(server: Server, name: str, data: bytes, status: int, trace_id: str,
          must_keep: bool, intact: bool = True) -> None:
    """The valid span sent beside odd ones: accepted when the rules say so, and stored
    whenever the body was accepted (unless its bytes were damaged, the span too)."""
    if must_keep:
        expect(status == 202, name, data, status,
               "a valid span beside invalid ones was not accepted")
    if status == 202 and intact:
        expect(trace_stored(server, trace_id), name, data, status,
               "202, but the valid span is not stored")


def with_sentinel(span: Any) -> tuple[dict[str, Any], str]:
    """An OTLP/JSON body: `span` in one resource, a valid span in another."""
    trace_id = uuid.uuid4().hex
    body = s.json_traces(span)
    body["resourceSpans"] += s.json_traces(s.json_span(trace_id))["resourceSpans"]
    return body, trace_id


@fuzz(40)
@given(mutated=s.mutations(s.json_span()), standard_port=st.booleans(),
       encoding=st.sampled_from([None, None, "gzip", "zstd", "deflate"]))
def test_json_span_mutations_keep_the_valid_span(
        fuzz_server: Server, session: requests.Session, mutated: s.Mutated,
        standard_port: bool, encoding: str | None) -> None:
    body, trace_id = with_sentinel(mutated.body)
    data = s.dumps(body)
    status = send(fuzz_server, session, standard_port, data, JSON, encoding)
    must_keep = s.depth_of(body) <= s.BODY_MAX_DEPTH and not s.refusable(body)
    keeps(fuzz_server, door(fuzz_server, standard_port)[0], data, status, trace_id, must_keep)


@fuzz(25)
@given(mutated=s.mutations(s.json_traces(s.json_span(), s.json_span(span_id="00f067aa0ba902b7"))),
       standard_port=st.booleans())
def test_json_envelope_mutations(fuzz_server: Server, session: requests.Session,
                                 mutated: s.Mutated, standard_port: bool) -> None:
    send(fuzz_server, session, standard_port, s.dumps(mutated.body), JSON)


def json_deep_value(depth: int, kvlist: bool) -> s.Raw:
    """An AnyValue nested `depth` levels, as JSON text (too deep for json.dumps)."""
    if kvlist:
        opener, closer, per_level = '{"kvlistValue":{"values":[{"key":"k","value":', "}]}}", 4
    else:
        opener, closer, per_level = '{"arrayValue":{"values":[', "]}}", 3
    text = opener * depth + '{"stringValue":"bottom"}' + closer * depth
    json_depth = per_level * depth + 1
    return s.Raw(text.encode(), json_depth, json_depth > s.BODY_MAX_DEPTH)


@pytest.mark.parametrize("depth", [15, 16, 17, 30, 100, 300])
@pytest.mark.parametrize("kvlist", [False, True])
def test_json_deep_attribute_values(fuzz_server: Server, session: requests.Session,
                                    depth: int, kvlist: bool) -> None:
    """An attribute value nested past 16 levels drops its span alone (or, past the
    body's 128 levels, the body is a 400): stored, it could not be read back. Within
    16 levels the span is stored."""
    span = s.json_span()
    span["attributes"].append({"key": "deep", "value": json_deep_value(depth, kvlist)})
    body, trace_id = with_sentinel(span)
    data = s.dumps(body)
    status = send(fuzz_server, session, False, data, JSON)
    keeps(fuzz_server, "/ingest/v1/traces", data, status, trace_id,
          s.depth_of(body) <= s.BODY_MAX_DEPTH)
    stored = trace_stored(fuzz_server, span["traceId"])
    if depth <= s.VALUE_MAX_DEPTH:
        expect(stored, "/ingest/v1/traces", data, status,
               f"a span whose attribute nests {depth} levels is not stored")
    else:
        expect(not stored, "/ingest/v1/traces", data, status,
               f"a span whose attribute nests {depth} levels is stored")


@fuzz(40)
@given(case=ps.trace_requests(), standard_port=st.booleans(),
       encoding=st.sampled_from([None, None, "gzip", "zstd"]))
def test_protobuf_keeps_the_valid_span(fuzz_server: Server, session: requests.Session,
                                       case: ps.ProtoCase, standard_port: bool,
                                       encoding: str | None) -> None:
    status = send(fuzz_server, session, standard_port, case.body, PROTOBUF, encoding)
    keeps(fuzz_server, door(fuzz_server, standard_port)[0], case.body, status,
          case.sentinel, case.must_keep, case.intact)


@fuzz(30)
@given(body=uniform(s.random_bodies(), ps.trace_requests().map(lambda c: c.body)),
       content_type=st.sampled_from([JSON, PROTOBUF]), standard_port=st.booleans(),
       data=st.data())
def test_random_bodies_and_headers(fuzz_server: Server, session: requests.Session, body: bytes,
                                   content_type: str, standard_port: bool,
                                   data: st.DataObject) -> None:
    headers, sent = data.draw(s.transports(body, content_type))
    headers["Authorization"] = f"Bearer {fuzz_server.key}"
    name, url = door(fuzz_server, standard_port)
    check_http(name, post(session, url, sent, headers), sent)
