"""Sounding's own signals over gRPC (proto/sounding/v1/ingest.proto) against the
real server: the same records stored as over HTTP, the same problems refused, the
same authentication."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.json_format import ParseDict
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2, status_pb2

from proto.sounding.v1 import ingest_pb2, ingest_pb2_grpc
from tests.receiver.otlp_helpers import grpc_auth, rpc_error, trailer
from tests.support.server import Projects, Server

TRACE_ID, SPAN_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


@pytest.fixture
def channel_to() -> Iterator[Callable[[Server], grpc.Channel]]:
    channels: list[grpc.Channel] = []

    def make(server: Server) -> grpc.Channel:
        channels.append(grpc.insecure_channel(server.grpc_target))
        return channels[-1]

    yield make
    for channel in channels:
        channel.close()


def error_json(**overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "exception_class": "KeyError", "message": "'user_42'",
        "backtrace": ["app.py:10 in load", "app.py:3 in main"], "fingerprint": "keyerror-load",
    }
    record.update(overrides)
    return {k: v for k, v in record.items() if v is not None}


def violations(error: grpc.RpcError) -> set[tuple[str, str]]:
    raw = trailer(error, "grpc-status-details-bin")
    bad_request = error_details_pb2.BadRequest()
    assert status_pb2.Status.FromString(raw).details[0].Unpack(bad_request)
    return {(v.field, v.description) for v in bad_request.field_violations}


def _plain(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) and value[:1] in "[{" else value


def stored_errors(server: Server) -> list[dict[str, Any]]:
    """The error events of the server's project, in the order stored."""
    rows = server.project_rows("error_events", order_by="id")
    return [{k: _plain(v) for k, v in row._mapping.items() if k not in ("id", "received_us")}
            for row in rows]


def test_an_error_is_stored_exactly_as_the_same_error_over_http(module_projects: Projects,
                                                                channel_to: Any) -> None:
    server = module_projects.take()
    record = error_json(
        request_id="req-7", user_id="u-1", params={"cart": {"items": 3, "total": 9.5},
                                                   "tags": ["a", True, None]},
        timestamp="2026-11-20T10:00:00.250Z", trace_id=TRACE_ID, span_id=SPAN_ID,
        environment="prod", release="2.4.1", service="checkout",
        tags={"browser": "Firefox", "os": "Linux"},
        source_context={"file": "app.py", "lineno": 10, "context_line": "    return d[k]",
                        "pre_context": ["def load(d, k):"], "post_context": []})
    assert server.post("/ingest/errors", record).status_code == 202
    stub = ingest_pb2_grpc.ErrorServiceStub(channel_to(server))
    response = stub.Report(ParseDict(record, ingest_pb2.ErrorRecord()), metadata=grpc_auth(server))
    assert response == ingest_pb2.Accepted()
    over_http, over_grpc = stored_errors(server)
    assert over_grpc == over_http
    assert over_grpc["params"] == {"cart": {"items": 3, "total": 9.5}, "tags": ["a", True, None]}
    assert over_grpc["tags"] == {"browser": "Firefox", "os": "Linux"}
    assert (over_grpc["environment"], over_grpc["release"]) == ("prod", "2.4.1")
    (group,) = server.project_rows("error_groups", "count")
    assert group.count == 2


def test_an_errors_details_are_stored_exactly_as_over_http(sqlite_projects: Projects,
                                                          channel_to: Any) -> None:
    server = sqlite_projects.take()
    record = error_json(
        level="fatal", event_id=None, timestamp="2026-11-20T10:00:00Z",
        exceptions=[{"type": "KeyError", "value": "'k'", "mechanism": {"handled": False,
                                                                      "exception_id": 0},
                     "frames": [{"filename": "app.py", "lineno": 10, "colno": 4,
                                 "in_app": True, "context_line": "    return d[k]",
                                 "pre_context": ["def load(d, k):"], "post_context": []}]}],
        context={"user": {"id": "u-1"}, "breadcrumbs": [{"message": "m", "level": 20}],
                 "platform": "python"})
    assert server.post("/ingest/errors", record).status_code == 202
    stub = ingest_pb2_grpc.ErrorServiceStub(channel_to(server))
    stub.Report(ParseDict(record, ingest_pb2.ErrorRecord()), metadata=grpc_auth(server))
    over_http, over_grpc = stored_errors(server)
    assert over_grpc == over_http
    assert over_grpc["level"] == "fatal"
    assert over_grpc["exceptions"][0]["frames"][0]["lineno"] == 10  # a Struct's 10.0
    assert over_grpc["context"]["breadcrumbs"] == [{"message": "m", "level": 20}]
    # One event id, one occurrence, whichever door it came through.
    keyed = error_json(event_id="cd" * 16)
    assert server.post("/ingest/errors", keyed).status_code == 202
    stub.Report(ParseDict(keyed, ingest_pb2.ErrorRecord()), metadata=grpc_auth(server))
    assert server.query("SELECT count(*) FROM error_events WHERE occurrence_key = :k "
                               "AND project_id = :p", k="cd" * 16,
                               p=server.project_id())[0][0] == 1


@pytest.mark.parametrize("record", [
    error_json(exception_class=None, fingerprint=None),
    error_json(exception_class="", message=None),
    error_json(fingerprint="x" * 256),
    error_json(trace_id="not-hex"),
    error_json(source_context={"lineno": 3}),
    error_json(environment="e" * 201, tags={"v": "x" * 201, "": "y"}),
    error_json(level="loud", event_id="xyz", context={"user": "u", "breadcrumbs": [1]},
               exceptions=[{"type": 3, "frames": [{"lineno": 1.5, "in_app": "y"}, "f"]}, {}]),
])
def test_an_invalid_error_names_the_same_problems_as_over_http(
        sqlite_projects: Projects, channel_to: Any, record: dict[str, Any]) -> None:
    server = sqlite_projects.take()
    over_http = server.post("/ingest/errors", record)
    assert over_http.status_code == 400
    expected = {(d["field"], d["error"]) for d in over_http.json()["details"]}
    stub = ingest_pb2_grpc.ErrorServiceStub(channel_to(server))
    error = rpc_error(lambda: stub.Report(ParseDict(record, ingest_pb2.ErrorRecord()),
                                          metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert violations(error) == expected


def test_an_error_batch_keeps_the_valid_items_and_reports_the_rest(sqlite_projects: Projects,
                                                                   channel_to: Any) -> None:
    server = sqlite_projects.take()
    stub = ingest_pb2_grpc.ErrorServiceStub(channel_to(server))
    batch = ingest_pb2.ErrorBatch(errors=[
        ParseDict(error_json(fingerprint="one"), ingest_pb2.ErrorRecord()),
        ParseDict(error_json(exception_class=None), ingest_pb2.ErrorRecord()),
        ParseDict(error_json(fingerprint="two"), ingest_pb2.ErrorRecord()),
    ])
    traceparent = f"00-{TRACE_ID}-{SPAN_ID}-01"
    result = stub.ReportBatch(batch, metadata=grpc_auth(server, traceparent=traceparent))
    assert (result.accepted, result.rejected) == (2, 1)
    (item,) = result.rejected_items
    assert item.index == 1
    assert [(d.field, d.error) for d in item.details] == [
        ("errors[1].exception_class", "is required")]
    rows = server.project_rows("error_events", "fingerprint, trace_id, span_id")
    assert sorted(tuple(r) for r in rows) == [("one", TRACE_ID, SPAN_ID),
                                              ("two", TRACE_ID, SPAN_ID)]


@pytest.mark.parametrize(("batch", "problem"), [
    (ingest_pb2.ErrorBatch(), "at least one"),
    (ingest_pb2.ErrorBatch(errors=[ingest_pb2.ErrorRecord()] * 1001), "at most 1000"),
    (ingest_pb2.ErrorBatch(errors=[ingest_pb2.ErrorRecord()]), "is required"),
])
def test_error_batch_envelope_rules(sqlite_projects: Projects, channel_to: Any,
                                    batch: ingest_pb2.ErrorBatch, problem: str) -> None:
    server = sqlite_projects.take()
    stub = ingest_pb2_grpc.ErrorServiceStub(channel_to(server))
    error = rpc_error(lambda: stub.ReportBatch(batch, metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert problem in error.details()  # type: ignore[attr-defined]


def test_deploys_are_stored_as_over_http(module_projects: Projects, channel_to: Any) -> None:
    server = module_projects.take()
    record = {"git_sha": "a1b2c3d", "version": "1.2.0", "env": "prod", "deployer": "ci",
              "description": "release", "timestamp": "2026-11-20T10:00:00Z",
              "service": "checkout"}
    assert server.post("/ingest/deploys", record).status_code == 202
    stub = ingest_pb2_grpc.DeployServiceStub(channel_to(server))
    assert stub.Record(ParseDict(record, ingest_pb2.DeployRecord()), metadata=grpc_auth(server)) \
        == ingest_pb2.Accepted()
    rows = server.project_rows("deploys", "git_sha, version, env, deployer, description, "
                               "ts_us, service", order_by="id")
    assert len(rows) == 2 and tuple(rows[0]) == tuple(rows[1])
    assert rows[1].service == "checkout"
    error = rpc_error(lambda: stub.Record(ingest_pb2.DeployRecord(version="x"),
                                          metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert ("git_sha", "is required") in violations(error)
    error = rpc_error(lambda: stub.Record(
        ingest_pb2.DeployRecord(git_sha="abc", service="s" * 201), metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert ("service", "must be at most 200 characters, got 201") in violations(error)


def test_request_metrics_are_rolled_up_as_over_http(sqlite_projects: Projects,
                                                    channel_to: Any) -> None:
    server = sqlite_projects.take()
    item = {"method": "get", "route": "/cart", "status": 200, "duration_ms": 12.5,
            "timestamp": "2026-11-20T10:00:30Z", "service": "web", "env": "prod"}
    assert server.post("/ingest/requests", {"requests": [item]}).status_code == 202
    stub = ingest_pb2_grpc.RequestServiceStub(channel_to(server))
    batch = ParseDict({"requests": [item, {**item, "status": 99}]}, ingest_pb2.RequestBatch())
    result = stub.ReportBatch(batch, metadata=grpc_auth(server))
    assert (result.accepted, result.rejected) == (1, 1)
    assert result.rejected_items[0].details[0].field == "requests[1].status"
    (row,) = server.project_rows("request_rollups",
                                        "method, route, count, duration_sum_ms")
    assert tuple(row) == ("GET", "/cart", 2, 25.0)


def test_custom_services_need_a_valid_key(sqlite_projects: Projects, channel_to: Any) -> None:
    server = sqlite_projects.take()
    channel = channel_to(server)
    calls: list[Callable[[Any], Any]] = [
        lambda md: ingest_pb2_grpc.ErrorServiceStub(channel).Report(
            ingest_pb2.ErrorRecord(), metadata=md),
        lambda md: ingest_pb2_grpc.DeployServiceStub(channel).Record(
            ingest_pb2.DeployRecord(git_sha="abc"), metadata=md),
        lambda md: ingest_pb2_grpc.RequestServiceStub(channel).ReportBatch(
            ingest_pb2.RequestBatch(), metadata=md),
    ]
    for call in calls:
        for metadata in ((), (("authorization", "Bearer not-a-key"),)):
            error = rpc_error(lambda c=call, m=metadata: c(m))  # type: ignore[misc]
            assert error.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]


def test_undecodable_messages_are_invalid_argument(sqlite_projects: Projects,
                                                   channel_to: Any) -> None:
    server = sqlite_projects.take()
    report = channel_to(server).unary_unary("/sounding.v1.ErrorService/Report")
    error = rpc_error(lambda: report(b"\x0a\xff\xff", metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert "sounding.v1.ErrorRecord" in error.details()  # type: ignore[attr-defined]


# --- values the HTTP doors refuse are INVALID_ARGUMENT here, never INTERNAL ------------

def _error_with(**fields: Any) -> ingest_pb2.ErrorRecord:
    record = ParseDict(error_json(), ingest_pb2.ErrorRecord())
    for name, value in fields.items():
        if name == "params":
            record.params.update(value)
        else:
            getattr(record, name).CopyFrom(value)
    return record


def _deep_struct(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


RANGE = "must be between 1970-01-01T00:00:00Z and 2262-04-11T23:47:16.854775Z"


@pytest.mark.parametrize(("record", "field", "problem"), [
    (_error_with(timestamp=Timestamp(seconds=253402300800)), "timestamp", RANGE),
    (_error_with(timestamp=Timestamp(seconds=-62135596801)), "timestamp", RANGE),
    (_error_with(timestamp=Timestamp(seconds=-1)), "timestamp", RANGE),
    (_error_with(timestamp=Timestamp(seconds=2**62)), "timestamp", RANGE),
    (_error_with(timestamp=Timestamp(seconds=1, nanos=-1)), "timestamp", "nanos"),
    (_error_with(timestamp=Timestamp(seconds=1, nanos=1_000_000_000)), "timestamp", "nanos"),
    (_error_with(params={"x": math.nan}), "params", "finite"),
    (_error_with(params={"x": [math.inf]}), "params", "finite"),
    (_error_with(params=_deep_struct(17)), "params", "deeper than 16"),
    (_error_with(params=_deep_struct(30)), "params", "deeper than 16"),
])
def test_out_of_range_values_are_invalid_argument_naming_the_field(
        sqlite_projects: Projects, channel_to: Any, record: ingest_pb2.ErrorRecord, field: str,
        problem: str) -> None:
    server = sqlite_projects.take()
    stub = ingest_pb2_grpc.ErrorServiceStub(channel_to(server))
    error = rpc_error(lambda: stub.Report(record, metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert any(f == field and problem in text for f, text in violations(error)), \
        violations(error)
    # In a batch, the item is rejected alone under the same name as over HTTP.
    valid = ParseDict(error_json(), ingest_pb2.ErrorRecord())
    batch = ingest_pb2.ErrorBatch(errors=[record, valid])
    result = stub.ReportBatch(batch, metadata=grpc_auth(server))
    assert (result.accepted, result.rejected) == (1, 1)
    assert any(d.field == f"errors[0].{field}" and problem in d.error
               for d in result.rejected_items[0].details)


def test_timestamps_at_the_ends_of_the_range_are_kept(sqlite_projects: Projects,
                                                      channel_to: Any) -> None:
    server = sqlite_projects.take()
    stub = ingest_pb2_grpc.ErrorServiceStub(channel_to(server))
    for stamp in (Timestamp(seconds=0), Timestamp(seconds=9223372036, nanos=854775999)):
        assert stub.Report(_error_with(timestamp=stamp), metadata=grpc_auth(server)) \
            == ingest_pb2.Accepted()
    assert sorted(r.ts_us for r in server.project_rows("error_events", "ts_us")) \
        == [0, 9223372036854775]


def test_deploys_and_request_metrics_outside_the_time_range_are_invalid_argument(
        sqlite_projects: Projects, channel_to: Any) -> None:
    server = sqlite_projects.take()
    late = Timestamp(seconds=253402300800)
    deploys = ingest_pb2_grpc.DeployServiceStub(channel_to(server))
    error = rpc_error(lambda: deploys.Record(ingest_pb2.DeployRecord(git_sha="abc", timestamp=late),
                                             metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert ("timestamp", RANGE + ", got seconds=253402300800") in violations(error)
    requests_stub = ingest_pb2_grpc.RequestServiceStub(channel_to(server))
    item = ingest_pb2.RequestMetric(method="GET", route="/", status=200, duration_ms=math.nan,
                                    timestamp=late)
    error = rpc_error(lambda: requests_stub.ReportBatch(ingest_pb2.RequestBatch(requests=[item]),
                                                        metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert {f for f, _ in violations(error)} == {"requests[0].timestamp",
                                                  "requests[0].duration_ms"}
