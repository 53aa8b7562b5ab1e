"""The wire form (storage/wire/batch.py): a record the store cannot hold is dropped alone
and counted, the rest of its batch kept; text the store cannot hold is mended.
First the pure encoding, then the real server with a plugin that poisons records."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from model.records import Batch, ErrorEvent, MetricPoint, RequestMetric, Span
from processors.grouping import GroupingProcessor
from processors.reopen import ReopenProcessor
from storage import rows
from storage.wire.batch import encode, encode_checked
from tests.receiver.otlp_helpers import random_trace_id, request_of, span_pb, stored_spans
from tests.receiver.test_otlp_http import json_body, post
from tests.support.server import Projects, Server, collectors, project_keys

# The wire rows' values, read by name (storage/rows.py).
SPAN_NAME = rows.SPANS.getter("name")
ERROR_FINGERPRINT = rows.ERROR_EVENTS.getter("fingerprint")
GROUP_FINGERPRINT = rows.GROUPS.getter("fingerprint")
GROUP_COUNTS = rows.GROUPS.getter("count", "first_seen_us", "last_seen_us", "hourly")
REOPEN = rows.REOPEN.getter("fingerprint", "ts_us")


def error(fingerprint: str, ts_us: int = 7_200_000_000, **kw: Any) -> ErrorEvent:
    return ErrorEvent(fingerprint, "KeyError", "m", ["a.py:1"], ts_us, **kw)


def grouped(*errors: ErrorEvent) -> Batch:
    batch = Batch(1, errors=list(errors))
    return ReopenProcessor("reopen").process(GroupingProcessor("grouping").process(batch))


def span(span_name: str, **changes: Any) -> Span:
    record = Span("ab" * 16, "cd" * 8, "", span_name, 1, 1, 2, 0, "", "svc", "scope", {},
                  attributes={}, events=[])
    for field, value in changes.items():
        setattr(record, field, value)  # as a processor could
    return record


def test_a_batch_that_is_fine_loses_nothing() -> None:
    wire, dropped = encode_checked(grouped(error("a"), error("b")))
    assert dropped == {}
    assert [ERROR_FINGERPRINT(row) for row in wire.errors] == ["a", "b"]


@pytest.mark.parametrize(("change", "value"), [
    ("params", {"x": float("nan")}),
    ("params", {"x": object()}),
    ("message", "lone \ud800"),
    ("exception_class", 42),
    ("fingerprint", "f" * 256),
    ("trace_id", "0" * 33),
])
def test_an_unstorable_error_is_dropped_alone_and_its_group_recounted(
        change: str, value: Any) -> None:
    bad = error("shared", ts_us=10 * 3_600_000_000)
    batch = grouped(error("shared"), bad, error("other"))
    setattr(bad, change, value)  # as a processor after grouping could
    wire, dropped = encode_checked(batch)
    assert dropped == {"errors": 1}
    assert len(wire.errors) == 2
    groups = {GROUP_FINGERPRINT(row): row for row in wire.groups}
    if change == "fingerprint":
        assert set(groups) == {"shared", "other"}
    # The dropped error's count and time left its group.
    assert GROUP_COUNTS(groups["shared"]) == (1, 7_200_000_000, 7_200_000_000, {7200: 1})
    assert dict(map(REOPEN, wire.reopen))["shared"] == 7_200_000_000


def test_an_error_with_an_out_of_range_time_takes_no_group_time_with_it() -> None:
    bad = error("g", ts_us=2**70)  # past BIGINT, as a plugin might set it
    batch = grouped(error("g"), bad)
    wire, dropped = encode_checked(batch)
    assert dropped == {"errors": 1}
    (group,) = wire.groups
    assert GROUP_COUNTS(group)[:3] == (1, 7_200_000_000, 7_200_000_000)


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


@pytest.mark.parametrize("changes", [
    {"kind": 2**40}, {"status_code": "2"}, {"start_ns": 2**63}, {"name": None},
    {"category": "c" * 17}, {"trace_id": "not hex"},
    {"attributes": {"k\udc00": "v"}}, {"attributes": {"deep": _deep(40)}},
])
def test_an_unstorable_span_is_dropped_alone(changes: dict[str, Any]) -> None:
    bad = span("bad", **changes)
    wire, dropped = encode_checked(Batch(1, spans=[span("a"), bad, span("b")]))
    assert dropped == {"spans": 1}
    assert [SPAN_NAME(row) for row in wire.spans] == ["a", "b"]


def test_request_metrics_that_are_not_finite_or_not_numbers_are_dropped_alone() -> None:
    ok = RequestMetric("GET", "/", 200, 1.0, 0)
    batch = Batch(1, requests=[ok, RequestMetric("GET", "/", 200, float("inf"), 0),
                               RequestMetric("GET", "/", "200", 1.0, 0)])  # type: ignore[arg-type]
    wire, dropped = encode_checked(batch)
    assert dropped == {"requests": 2}
    assert wire.requests == [rows.REQUESTS.row(service="", env="", method="GET", route="/",
                                                ts_us=0, status=200, duration_ms=1.0)]


def test_nul_in_text_is_mended_not_dropped() -> None:
    batch = grouped(error("f\x00p", request_id="r\x00"))
    batch.spans.append(span("GET \x00"))
    wire, dropped = encode_checked(batch)
    assert dropped == {}
    assert SPAN_NAME(wire.spans[0]) == "GET \ufffd"
    assert rows.ERROR_EVENTS.getter("fingerprint", "request_id")(wire.errors[0]) == (
        "f\ufffdp", "r\ufffd")
    assert GROUP_FINGERPRINT(wire.groups[0]) == "f\ufffdp"
    assert REOPEN(wire.reopen[0])[0] == "f\ufffdp"


def test_the_encoded_batch_reports_what_was_dropped() -> None:
    encoded = encode(Batch(1, spans=[span("a"), span("bad", kind=2**40)]))
    assert encoded.unencodable == {"spans": 1}
    assert encoded.counts["spans"] == 1 and not encoded.empty
    assert encode(Batch(1, spans=[span("bad", kind=2**40)])).empty


def test_nul_is_mended_and_encoding_errors_caught_in_a_plain_batch() -> None:
    batch = Batch(1, spans=[span("GET \x00"), span("b", attributes={"k\udc00": "v"})])
    wire, dropped = encode_checked(batch)
    assert [SPAN_NAME(row) for row in wire.spans] == ["GET \ufffd"]
    assert dropped == {"spans": 1}


def test_every_batch_is_checked_whatever_stages_it_went_through() -> None:
    """No door or processor is trusted: a value only a door could have refused (a
    BIGINT past 2^63 from a decoder that did not look) is dropped alone here too."""
    fine, too_big = (MetricPoint("m", "1", "", "sum", 1, True, "svc", {}, "scope", {}, 0,
                                 time_ns, value=1, count=count)
                     for time_ns, count in ((5, 1), (6, 2**63)))
    wire, dropped = encode_checked(Batch(1, metrics=[fine, too_big]))
    assert dropped == {"metrics": 1}
    assert [rows.METRIC_WIRE.getter("time_ns")(row) for row in wire.metrics] == [5]


# --- through the real server ---------------------------------------------------------

def write_config(folder: Path) -> str:
    path = folder / "sounding.yaml"
    order = ["classify", "spanmetrics", "exceptions", "grouping", "poison", "reopen"]
    path.write_text(json.dumps({  # JSON is YAML
        "processors": {name: {} for name in order},
        "service": {"pipeline": {
            "receivers": ["http"], "processors": order, "exporters": ["sql"]}}}))
    return str(path)


def unencodable(server: Server, signal: str) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(rf'^sounding_records_dropped_total\{{reason="unencodable",'
                      rf'signal="{signal}"\}} (\S+)', text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


@pytest.fixture(scope="module")
def poisoned_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
                      ) -> Iterator[Projects]:
    """One collector per module and store with the poisoning plugin, a project per test:
    the plugin touches only records named poison-<kind>."""
    folder = tmp_path_factory.mktemp("poisoned")
    with collectors(folder) as start:
        yield Projects(start(module_db_url, keys=project_keys(),
                             config=write_config(folder)))


@pytest.fixture
def poisoned(poisoned_projects: Projects) -> Server:
    return poisoned_projects.take()


def test_records_a_plugin_made_unstorable_are_dropped_alone(poisoned: Server) -> None:
    errors = [{"exception_class": "E", "message": "m", "backtrace": [], "fingerprint": f}
              for f in ("good-1", "poison-nan", "poison-surrogate", "poison-bigint",
                        "poison-type", "poison-object", "good-2")]
    dropped = unencodable(poisoned, "errors")  # the collector's, for every project
    response = poisoned.post("/ingest/errors/batch", {"errors": errors})
    assert response.status_code == 202, response.text
    stored = sorted(r.fingerprint for r in poisoned.project_rows("error_events", "fingerprint"))
    assert stored == ["good-1", "good-2"]
    groups = sorted(r.fingerprint for r in poisoned.project_rows("error_groups", "fingerprint"))
    assert groups == ["good-1", "good-2"]
    assert unencodable(poisoned, "errors") == dropped + 5
    assert "Traceback" not in poisoned.log()


def test_spans_a_plugin_made_unstorable_are_dropped_alone(poisoned: Server) -> None:
    dropped = unencodable(poisoned, "spans")
    trace_id = random_trace_id()
    body = request_of(span_pb(trace_id, "00000000000000a1", "fine"),
                      span_pb(trace_id, "00000000000000a2", "poison-kind"),
                      span_pb(trace_id, "00000000000000a3", "poison-deep"),
                      span_pb(trace_id, "00000000000000a4", "poison-surrogate"))
    assert post(poisoned, body.SerializeToString()).status_code == 202
    assert [s["name"] for s in stored_spans(poisoned, trace_id)] == ["fine"]
    json_trace = random_trace_id()
    body_json = json_body({"traceId": json_trace, "spanId": "00000000000000b1", "name": "ok"},
                          {"traceId": json_trace, "spanId": "00000000000000b2",
                           "name": "poison-kind"})
    assert post(poisoned, body_json, "application/json").status_code == 202
    assert [s["name"] for s in stored_spans(poisoned, json_trace)] == ["ok"]
    assert unencodable(poisoned, "spans") == dropped + 4


def test_nul_from_a_client_is_stored_as_the_replacement_character(poisoned: Server) -> None:
    server = poisoned  # a project of its own; the plugin leaves these records alone
    # PostgreSQL's text cannot hold NUL; both stores hold the same mended text.
    body = {"exception_class": "Key\u0000Error", "message": "m\u0000", "backtrace": ["\u0000"],
            "fingerprint": "nul\u0000", "params": {"k\u0000": "v\u0000"}}
    assert server.post("/ingest/errors", body).status_code == 202
    (row,) = server.project_rows("error_events")
    assert (row.exception_class, row.message, row.fingerprint) == (
        "Key\ufffdError", "m\ufffd", "nul\ufffd")
    params = json.loads(row.params) if isinstance(row.params, str) else row.params
    assert params == {"k\u0000": "v\u0000"}  # JSON text keeps it, escaped
    (group,) = server.project_rows("error_groups", "fingerprint, count")
    assert tuple(group) == ("nul\ufffd", 1)
