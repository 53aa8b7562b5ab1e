"""Whatever a door accepted can be read back: after each accepted record with odd
values (errors with odd params, strings and times; spans with odd attributes;
deploys; request metrics), every dashboard page and read-API endpoint that shows it
answers 200 with strictly valid JSON (no NaN, no Infinity) or HTML whose embedded
chart data is strictly valid JSON too."""

from __future__ import annotations

import base64
import html
import re
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import grpc
import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from proto.sounding.v1 import ingest_pb2
from tests.dashboard.data import ADMIN_TOKEN
from tests.fuzz import proto_strategies as ps
from tests.fuzz import strategies as s
from tests.fuzz.doors import call_raw, fuzz, logged_in, strict_json, violation
from tests.fuzz.strategies import uniform
from tests.support.server import Server

PAGES = "/projects/acme"
API = "/api/v1/projects/acme"
EMBEDDED = re.compile(r'data-(?:json|spark)="([^"]*)"')
RANGES = ["", "range=30d"]


@pytest.fixture(scope="module")
def reader(fuzz_server: Server) -> Iterator[requests.Session]:
    with logged_in(fuzz_server) as session:
        yield session


def accepted(server: Server, path: str, body: Any) -> bool:
    response = requests.post(server.base + path, data=s.dumps(body), headers=server.headers(),
                             timeout=30)
    return response.status_code == 202


def read_back(server: Server, reader: requests.Session, sent: Any, paths: list[str]) -> None:
    """GET every path; each answers 200 with strict JSON (the API) or HTML (pages)."""
    request = sent if isinstance(sent, bytes) else s.dumps(sent)
    for path in paths:
        response = reader.get(server.base + path, timeout=30, allow_redirects=False,
                              headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
                              if path.startswith("/api/") else {})
        answer = f"{response.status_code} {response.text}"
        if response.status_code != 200:
            violation(f"GET {path}", request, answer, "an accepted record is not readable")
            continue
        try:
            if path.startswith("/api/"):
                strict_json(response.text)
            else:
                for embedded in EMBEDDED.findall(response.text):
                    strict_json(html.unescape(embedded))
        except ValueError as exc:
            violation(f"GET {path}", request, answer[:2000], f"not valid JSON: {exc}")


def q(value: str) -> str:
    """A query value as a browser sends it: a lone surrogate becomes U+FFFD."""
    return quote(value.encode("utf-16", "surrogatepass").decode("utf-16", "replace"), safe="")


def with_ranges(*paths: str) -> list[str]:
    return [f"{path}{'&' if '?' in path else '?'}{r}" if r else path
            for path in paths for r in RANGES]


# Values that were accepted before and then broke a page or the read API (issue 9).
HOSTILE = [float("nan"), float("inf"), float("-inf"), s.Raw(b"1e400"), -0.0, 2**64, -(2**63) - 1,
           1e308, "\ud800", "\x00\x1f", "\u2028", s._nest(s.VALUE_MAX_DEPTH, "dict"),
           s._nest(s.VALUE_MAX_DEPTH + 1, "list"), s._nest(600, "dict")]


@st.composite
def odd_errors(draw: st.DrawFn) -> dict[str, Any]:
    error = s.valid_error()
    error["trace_id"] = uuid.uuid4().hex
    for name in ("exception_class", "message", "request_id", "user_id"):
        if draw(st.booleans()):
            error[name] = draw(s.odd_strings())
    error["backtrace"] = draw(st.lists(s.odd_strings(), max_size=3))
    error["params"] = draw(st.dictionaries(s.odd_text(), s.weighted(
        (3, st.sampled_from(HOSTILE)), (1, s.odd_values())), min_size=1, max_size=4))
    error["timestamp"] = draw(st.sampled_from(s.EDGE_TIMES))
    error["source_context"]["lineno"] = draw(st.sampled_from([0, 1, 2**31 - 1]))
    error["source_context"]["context_line"] = draw(s.odd_strings())
    for name in ("environment", "release", "service"):
        if draw(st.booleans()):
            error[name] = draw(s.odd_strings())
    if draw(st.booleans()):
        error["tags"] = draw(st.dictionaries(s.odd_text(), s.odd_strings(), max_size=4))
    return error


@fuzz(15)
@given(error=odd_errors())
def test_accepted_errors_read_back(fuzz_server: Server, reader: requests.Session,
                                   error: dict[str, Any]) -> None:
    if not accepted(fuzz_server, "/ingest/errors", error):
        return
    rows = fuzz_server.query(
        "SELECT g.id AS group_id, e.id AS event_id FROM error_groups g JOIN error_events e "
        "ON e.fingerprint = g.fingerprint AND e.project_id = g.project_id "
        "WHERE g.fingerprint = :f", f=error["fingerprint"])
    group, event = rows[0].group_id, rows[0].event_id
    trace = error["trace_id"]
    read_back(fuzz_server, reader, error, [
        *with_ranges(f"{PAGES}/errors", f"{PAGES}/errors?status=resolved",
                     f"{PAGES}/errors?status=ignored", f"{API}/error-groups?status=all"),
        f"{PAGES}/errors/{group}", f"{PAGES}/errors/{group}?event={event}",
        f"{API}/error-groups/{group}", f"{API}/error-groups/{group}?event={event}",
        f"{PAGES}/traces/{trace}", f"{API}/traces/{trace}",
        *[f"{API}/error-groups?{name}={q(error[name])}" for name in ("environment", "release")
          if isinstance(error.get(name), str)],
        *([f"{API}/releases/{q(error['release'])}"]
          if isinstance(error.get("release"), str) and error["release"] else [])])


def attribute_values() -> st.SearchStrategy[dict[str, Any]]:
    return uniform(
        s.odd_strings().map(lambda v: {"stringValue": v}),
        st.sampled_from(s.EDGE_INTS).map(lambda v: {"intValue": str(v)}),
        st.sampled_from([*s.EDGE_FLOATS, "NaN", "Infinity", "-Infinity", "1e308"]).map(
            lambda v: {"doubleValue": v}),
        st.sampled_from([s.VALUE_MAX_DEPTH - 1, s.VALUE_MAX_DEPTH]).map(
            lambda depth: _nested_any(depth)),
        st.binary(max_size=8).map(lambda b: {"bytesValue": base64.b64encode(b).decode()}),
    )


def _nested_any(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"doubleValue": 0.5}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


@st.composite
def odd_spans(draw: st.DrawFn) -> dict[str, Any]:
    span = s.json_span()
    span["name"] = draw(s.odd_strings())
    span["attributes"] += [{"key": draw(s.odd_text()), "value": draw(attribute_values())}
                           for _ in range(draw(st.integers(1, 4)))]
    span["events"][0]["attributes"].append({"key": "exception.stacktrace",
                                            "value": draw(attribute_values())})
    span["status"]["message"] = draw(s.odd_strings())
    start = draw(st.sampled_from([0, 1, 1_700_000_000_000_000_000, 2**63 - 1]))
    span["startTimeUnixNano"] = str(start)
    span["endTimeUnixNano"] = str(draw(st.sampled_from([start, start + 10**9, 2**63 - 1])))
    return span


@fuzz(15)
@given(span=odd_spans())
def test_accepted_spans_read_back(fuzz_server: Server, reader: requests.Session,
                                  span: dict[str, Any]) -> None:
    body = s.json_traces(span, service="readback")
    if not accepted(fuzz_server, "/ingest/v1/traces", body):
        return
    trace = span["traceId"]
    read_back(fuzz_server, reader, body, [
        f"{PAGES}/traces/{trace}", f"{API}/traces/{trace}",
        *with_ranges(f"{PAGES}/traces", f"{API}/traces", f"{API}/traces?service=readback",
                     f"{PAGES}/errors", f"{API}/error-groups?status=all",
                     f"{PAGES}/performance?service=readback",
                     f"{API}/performance?service=readback")])


@fuzz(10)
@given(deploy=s.mutations(s.valid_deploy()), metric=s.mutations(s.valid_request("/readback")))
def test_accepted_deploys_and_request_metrics_read_back(
        fuzz_server: Server, reader: requests.Session, deploy: s.Mutated,
        metric: s.Mutated) -> None:
    paths = []
    if accepted(fuzz_server, "/ingest/deploys", deploy.body):
        env = deploy.body.get("env")
        query = f"?env={q(env)}" if isinstance(env, str) else ""
        paths += with_ranges(f"{PAGES}/deploys{query}", f"{API}/deploys{query}")
    if accepted(fuzz_server, "/ingest/requests", {"requests": [metric.body]}):
        item = metric.body
        query = "&".join(f"{k}={q(item[k])}" for k in ("service", "env", "route", "method")
                         if isinstance(item.get(k), str))
        paths += with_ranges(f"{PAGES}/performance?{query}", f"{API}/performance?{query}")
    read_back(fuzz_server, reader, {"deploy": deploy.body, "metric": metric.body},
              [*paths, "/api/v1/projects"])


@fuzz(10)
@given(record=ps.error_records())
def test_errors_accepted_over_grpc_read_back(fuzz_server: Server, reader: requests.Session,
                                             record: ps.ErrorCase) -> None:
    """The gRPC door takes params as a protobuf Struct (NaN and infinities included)
    and times as a Timestamp: what it accepts must read back as well."""
    fingerprint = s.marker()
    # Serialized messages merge field by field: a valid record, the odd one's fields
    # over it, then a fingerprint of our own.
    body = (ps.valid_error_record(fingerprint).SerializeToString() + record.wire
            + ingest_pb2.ErrorRecord(fingerprint=fingerprint).SerializeToString())
    with grpc.insecure_channel(fuzz_server.grpc_target) as channel:
        code, _ = call_raw(channel, "/sounding.v1.ErrorService/Report", body, fuzz_server.key)
    if code != grpc.StatusCode.OK:
        return
    (row,) = fuzz_server.query("SELECT id FROM error_groups WHERE fingerprint = :f",
                               f=fingerprint)
    read_back(fuzz_server, reader, body, [
        f"{PAGES}/errors/{row.id}", f"{API}/error-groups/{row.id}",
        *with_ranges(f"{PAGES}/errors", f"{API}/error-groups?status=all")])
