"""The gRPC door of logs, LogsService/Export, against the real server on SQLite and
PostgreSQL: records stored with every field, gzip, authentication, partial success
(`rejected_log_records`), INVALID_ARGUMENT naming the field, a retry stored once. One
collector per module and store, a project per test (`module_projects`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc

from tests.receiver.logs_helpers import dropped_logs, log_pb, logs_request, stored_logs
from tests.receiver.otlp_helpers import (
    EVERY_KIND,
    grpc_auth,
    random_trace_id,
    rpc_error,
    trailer,
)
from tests.support.server import Projects, Server


@pytest.fixture
def stub_for() -> Iterator[Callable[[Server], logs_service_pb2_grpc.LogsServiceStub]]:
    channels: list[grpc.Channel] = []

    def make(server: Server) -> logs_service_pb2_grpc.LogsServiceStub:
        channels.append(grpc.insecure_channel(server.grpc_target))
        return logs_service_pb2_grpc.LogsServiceStub(channels[-1])

    yield make
    for channel in channels:
        channel.close()


def test_export_stores_every_field_and_a_retry_once(module_projects: Projects,
                                                    stub_for: Any) -> None:
    server = module_projects.take()
    trace_id = random_trace_id()
    record = log_pb(trace_id, flags=1, event_name="e", observed_time_unix_nano=5,
                    dropped_attributes_count=4)
    for key, (value, _) in EVERY_KIND.items():
        record.attributes.add(key=key, value=value)
    record.body.array_value.values.add(double_value=0.25)
    request = logs_request(record, service="grpc-svc", scope="s")
    stub = stub_for(server)
    for _ in range(2):  # an exporter's retry after a lost reply
        response = stub.Export(request, metadata=grpc_auth(server),
                               compression=grpc.Compression.Gzip)
        assert response == logs_service_pb2.ExportLogsServiceResponse()
    (stored,) = stored_logs(server, trace_id, project=server.project_id())
    assert stored == {
        "id": stored["id"], "time_ns": 1_795_168_800_000_000_000, "observed_ns": 5,
        "severity_number": 9, "severity_text": "INFO", "body": [0.25],
        "attributes": {k: v for k, (_, v) in EVERY_KIND.items()},
        "resource": {"service.name": "grpc-svc"}, "service_name": "grpc-svc",
        "scope_name": "s", "trace_id": trace_id, "span_id": "01" * 8, "flags": 1,
        "event_name": "e", "dropped_attributes_count": 4, "unreadable": []}


@pytest.mark.parametrize("metadata", [(), (("authorization", "Bearer wrong-key"),)])
def test_missing_or_unknown_key_is_unauthenticated(module_projects: Projects, stub_for: Any,
                                                   metadata: Any) -> None:
    server = module_projects.take()
    trace_id = random_trace_id()
    error = rpc_error(lambda: stub_for(server).Export(
        logs_request(log_pb(trace_id)), metadata=metadata))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
    assert stored_logs(server, trace_id) == []


def test_records_that_cannot_be_kept_are_a_partial_success(module_projects: Projects,
                                                           stub_for: Any) -> None:
    server = module_projects.take()
    trace_id = random_trace_id()
    bad = log_pb(trace_id, "bad", span_id=b"\x01" * 3)
    stub = stub_for(server)
    dropped = dropped_logs(server)  # the collector's, counted for every project
    response = stub.Export(logs_request(log_pb(trace_id, "good"), bad),
                           metadata=grpc_auth(server))
    assert response.partial_success.rejected_log_records == 1
    assert "spanId must be empty or 8 bytes" in response.partial_success.error_message
    assert [r["body"] for r in stored_logs(server, trace_id, project=server.project_id())] \
        == ["good"]
    assert dropped_logs(server) == dropped + 1
    # Nothing keepable at all: INVALID_ARGUMENT naming the record, as HTTP answers 400.
    error = rpc_error(lambda: stub.Export(logs_request(bad), metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    status = status_pb2.Status.FromString(trailer(error, "grpc-status-details-bin"))
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert bad_request.field_violations[0].field == "resourceLogs[0].scopeLogs[0].logRecords[0]"


def test_undecodable_data_is_invalid_argument(module_projects: Projects) -> None:
    server = module_projects.take()
    with grpc.insecure_channel(server.grpc_target) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.logs.v1.LogsService/Export")
        error = rpc_error(lambda: export(b"\xff\xff\xff\xff", metadata=grpc_auth(server)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert server.project_rows("logs", "count(*)")[0][0] == 0
