"""The one JSON parse of every JSON door (receiver/jsonbody.py): its rules as a pure
function, then the same rules at every JSON endpoint of the real server (one collector
per module and store, a project per test: `module_projects`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from model.errors import InvalidInput
from receiver.jsonbody import MAX_DEPTH, depth_of, parse_json, surely_shallow
from tests.receiver.otlp_helpers import random_trace_id, stored_spans
from tests.support.server import Projects, Server

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)

JSON_DOORS = ["/ingest/errors", "/ingest/errors/batch", "/ingest/deploys", "/ingest/requests",
              "/ingest/v1/traces"]


def refused(body: bytes) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_json(body)
    (detail,) = caught.value.details
    assert detail["field"] == "body"
    return str(detail["error"])


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@given(json_values)
@settings(max_examples=300, deadline=None, derandomize=True)
def test_both_parsers_read_any_json_document_alike(value: Any) -> None:
    # orjson reads ordinary bodies, the standard library the rest: one result either way.
    for body in (json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode()):
        assert parse_json(body) == json.loads(body)


def test_what_the_fast_parser_refuses_gets_the_exact_parsers_answer() -> None:
    assert parse_json(b'{"a": 1e400}') == {"a": float("inf")}  # refused later, by field
    assert parse_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a byte order mark
    assert parse_json(b'["\\ud800x"]') == ["\ufffdx"]
    assert "Expecting value" in refused(b'{"a": }')


def test_an_integer_beyond_64_bits_is_a_number_too_large_for_any_integer_field() -> None:
    assert parse_json(b"[18446744073709551615]") == [2**64 - 1]
    (big,) = parse_json(b"[18446744073709551616]")
    assert big >= 2**64


@pytest.mark.parametrize("depth", [129, 200, 989, 1000, 100_000])
def test_a_body_nested_deeper_than_the_limit_is_refused(depth: int) -> None:
    assert refused(nested(depth)) == f"nested deeper than {MAX_DEPTH} levels"


def test_a_body_nested_exactly_to_the_limit_is_read() -> None:
    assert depth_of(parse_json(nested(MAX_DEPTH))) == MAX_DEPTH
    alternating = b'[{"a":' * 64 + b"1" + b"}]" * 64
    assert depth_of(parse_json(alternating)) == MAX_DEPTH
    assert "nested deeper" in refused(b'[{"a":' * 65 + b"1" + b"}]" * 65)


def test_brackets_inside_strings_neither_hide_nor_fake_depth() -> None:
    # Strings that close brackets early and open them again later would fool a count
    # of brackets into seeing 128 levels where there are 200.
    disguised = (b"[" * 100 + b'"' + b"]" * 72 + b'",' + nested(100) + b',"' + b"[" * 72
                 + b'"' + b"]" * 100)
    assert not surely_shallow(disguised)
    assert "nested deeper" in refused(disguised)
    # And a string full of brackets is not depth.
    assert parse_json(json.dumps({"route": "[" * 500 + "/orders/{id}"}).encode())


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_literals_are_not_json(literal: str) -> None:
    assert literal in refused(b'{"x": %s}' % literal.encode())


@pytest.mark.parametrize(("body", "expected"), [
    (b'{"s": "E\\ud800"}', {"s": "E\ufffd"}),
    (b'{"s": "\\udfff\\ud800x"}', {"s": "\ufffd\ufffdx"}),
    (b'{"k\\ud800": ["\\udc00"]}', {"k\ufffd": ["\ufffd"]}),
    (b'{"s": "i_\\udfff"}', {"s": "i_\ufffd"}),  # a low surrogate alone
    (b'{"s": "\\uDC00"}', {"s": "\ufffd"}),
    (b'{"s": "\\ud83d\\ude00"}', {"s": "\U0001F600"}),  # a pair is one character
    (b'{"s": "\\\\ud800"}', {"s": "\\ud800"}),  # an escaped backslash, not an escape
    (b'{"s": "E\xed\xa0\x80"}', {"s": "E\ufffd\ufffd\ufffd"}),  # CESU-8, as Go reads it
    (b'{"s": "\xff\xc3"}', {"s": "\ufffd\ufffd"}),
])
def test_invalid_utf8_and_lone_surrogates_become_the_replacement_character(
        body: bytes, expected: Any) -> None:
    value = parse_json(body)
    assert value == expected
    json.dumps(value).encode()  # and every string of it encodes


def test_byte_order_marks_and_utf16_are_read_as_before() -> None:
    assert parse_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert parse_json('{"a": "é"}'.encode("utf-16")) == {"a": "é"}


# --- at every JSON door of the real server -------------------------------------------

def post_raw(server: Server, path: str, body: bytes) -> requests.Response:
    return requests.post(server.base + path, data=body, headers=server.headers(), timeout=30)


@pytest.mark.parametrize("path", JSON_DOORS)
@pytest.mark.parametrize("depth", [1000, 200])
def test_deep_bodies_are_a_400_at_every_json_door(module_projects: Projects, path: str,
                                                  depth: int) -> None:
    response = post_raw(module_projects.take(), path, nested(depth))
    assert response.status_code == 400, response.text
    assert response.json()["details"] == [
        {"field": "body", "error": f"nested deeper than {MAX_DEPTH} levels"}]


@pytest.mark.parametrize("path", JSON_DOORS)
def test_nan_is_a_400_at_every_json_door(module_projects: Projects, path: str) -> None:
    response = post_raw(module_projects.take(), path, b'{"x": NaN}')
    assert response.status_code == 400, response.text
    assert response.json()["details"][0]["field"] == "body"


def error(**overrides: object) -> dict[str, object]:
    record: dict[str, object] = {"exception_class": "KeyError", "message": "m",
                                 "backtrace": ["a.py:1"], "fingerprint": "f"}
    record.update(overrides)
    return record


def test_a_lone_surrogate_beside_a_valid_error_keeps_both(module_projects: Projects) -> None:
    server = module_projects.take()
    body = json.dumps({"errors": [error(exception_class="E\ud800", fingerprint="bad\udfff"),
                                  error(fingerprint="good")]}).encode()
    assert b"\\ud800" in body
    response = post_raw(server, "/ingest/errors/batch", body)
    assert response.status_code == 202, response.text
    assert response.json()["accepted"] == 2
    rows = {r.fingerprint: r.exception_class
            for r in server.project_rows("error_events", "fingerprint, exception_class")}
    assert rows == {"bad\ufffd": "E\ufffd", "good": "KeyError"}
    assert "Traceback" not in server.log()


def test_raw_cesu8_surrogate_bytes_in_a_string_are_replaced(module_projects: Projects) -> None:
    server = module_projects.take()
    body = json.dumps({"errors": [error(message="MARK"), error(fingerprint="g")]}).encode()
    response = post_raw(server, "/ingest/errors/batch",
                        body.replace(b"MARK", b"x\xed\xa0\x80y"))
    assert response.status_code == 202, response.text
    messages = sorted(r.message for r in server.project_rows("error_events", "message"))
    assert messages == ["m", "x\ufffd\ufffd\ufffdy"]


def test_a_span_name_and_attribute_with_a_lone_surrogate_are_kept(
        module_projects: Projects) -> None:
    server = module_projects.take()
    trace_id = random_trace_id()
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": trace_id, "spanId": "00000000000000a1", "name": "GET \ud800",
         "attributes": [{"key": "k\udc00", "value": {"stringValue": "v\ud800"}}]},
        {"traceId": trace_id, "spanId": "00000000000000a2", "name": "fine"}]}]}]}
    response = post_raw(server, "/ingest/v1/traces", json.dumps(doc).encode())
    assert response.status_code == 202, response.text
    spans = {s["name"]: s for s in stored_spans(server, trace_id)}
    assert set(spans) == {"GET \ufffd", "fine"}
    assert spans["GET \ufffd"]["attributes"] == {"k\ufffd": "v\ufffd"}
