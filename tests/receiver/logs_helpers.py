"""Building OTLP logs requests and reading stored log records back, for the logs
tests: `stored_logs` reads through storage/queries/logs.py, the read side's own
function, so a test compares what a client sent with what the API will show."""

from __future__ import annotations

import re
from typing import Any

import requests
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1 import logs_pb2
from sqlalchemy import select

from storage import schema
from storage.queries import logs as lq
from tests.support.server import Server


def stored_logs(server: Server, trace_id: str | None = None,
                service: str | None = None, project: int | None = None
                ) -> list[dict[str, Any]]:
    """The stored records of a trace (hex), a service or a project (id), oldest first."""
    table = schema.logs
    query = select(*lq.COLUMNS)
    if project is not None:
        query = query.where(table.c.project_id == project)
    if trace_id is not None:
        query = query.where(table.c.trace_id == bytes.fromhex(trace_id))
    if service is not None:
        query = query.where(table.c.service_name == service)
    with server.db().connect() as conn:
        rows = conn.execute(query.order_by(table.c.time_ns, table.c.record_key)).all()
        return lq.log_rows(conn, rows)


def log_pb(trace_id: str, text: str = "hello", **fields: Any) -> logs_pb2.LogRecord:
    record = logs_pb2.LogRecord(**{
        "trace_id": bytes.fromhex(trace_id), "span_id": b"\x01" * 8,
        "time_unix_nano": 1_795_168_800_000_000_000, "severity_number": 9,
        "severity_text": "INFO", **fields})
    record.body.string_value = text
    return record


def logs_request(*records: logs_pb2.LogRecord, service: str = "svc",
                 scope: str = "lib") -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    resource_logs.resource.attributes.add(key="service.name",
                                          value=AnyValue(string_value=service))
    scope_logs = resource_logs.scope_logs.add()
    scope_logs.scope.name = scope
    scope_logs.log_records.extend(records)
    return request


def dropped_logs(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r'^sounding_records_dropped_total\{reason="invalid",signal="logs"\} (\S+)',
                      text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def accepted_logs(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r'^sounding_records_accepted_total\{signal="logs"\} (\S+)', text,
                      re.MULTILINE)
    return float(match.group(1)) if match else 0.0
