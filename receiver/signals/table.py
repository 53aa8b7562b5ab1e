"""Every signal, and where each door receives it: one row per signal.

The HTTP door (receiver/http/door.py) routes `http.path` (and `http.otlp_path` on
the OTLP/HTTP port) to the signal's handler; the gRPC door (receiver/grpc/door.py)
serves `grpc.service`/`grpc.method`. The metrics label the requests by `name`
(HTTP) and `grpc_` + `name` (gRPC).

Sentry's door (receiver/sentry/door.py) is not a row: its path carries the project,
its keys and answers are Sentry's, and it has no gRPC door.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from model import limits
from proto.sounding.v1 import ingest_pb2
from receiver.grpc.messages import json_document, otlp_reply, sounding_reply
from receiver.http.base import JSON, PROTOBUF
from receiver.jsonbody import parse_json
from receiver.signals.deploys import handle_deploy
from receiver.signals.errors import handle_error, handle_error_batch
from receiver.signals.logs import handle_logs
from receiver.signals.metrics import handle_metrics
from receiver.signals.otlp import OtlpBody
from receiver.signals.outcome import Origin, Outcome
from receiver.signals.requests import handle_requests
from receiver.signals.traces import handle_traces
from runtime.pipeline import Pipeline

Handle = Callable[[Pipeline, Origin, Any], Awaitable[Outcome]]


@dataclass(frozen=True)
class HttpDoor:
    path: str
    # The Content-Types taken, in the order a 415 names them.
    content_types: tuple[str, ...]
    # (body, media type) -> the document the handler takes.
    document: Callable[[bytes, str], Any]
    # The standard OTLP/HTTP path, served on the OTLP port (4318) too.
    otlp_path: str | None = None
    # OTLP's partial success, (outcome, media type) -> the response body in the
    # request's media type, when records were dropped alone; None: an empty 202.
    partial: Callable[[Outcome, str], bytes] | None = None


@dataclass(frozen=True)
class GrpcDoor:
    service: str  # full name, as in the .proto
    method: str
    document: Callable[[bytes], Any]  # request bytes -> the document the handler takes
    reply: Callable[[Outcome], bytes]  # the outcome -> response bytes


@dataclass(frozen=True)
class Signal:
    name: str
    handle: Handle
    http: HttpDoor
    grpc: GrpcDoor
    # The limit categories of its records (model/limits.py): refused before the body
    # while the project's limits close them.
    categories: tuple[str, ...] = ()


def _json_body(body: bytes, media_type: str) -> Any:
    return parse_json(body)


def _otlp_body(body: bytes, media_type: str) -> OtlpBody:
    return OtlpBody(body, media_type == PROTOBUF)


def _otlp_proto(body: bytes) -> OtlpBody:
    return OtlpBody(body, True)


def _otlp_partial(response_type: type[Message], rejected_field: str
                  ) -> Callable[[Outcome, str], bytes]:
    """The OTLP/HTTP answer to a request whose records were partly dropped: the
    Export*ServiceResponse with its partial_success, protobuf or OTLP/JSON as the
    request was (the OTLP specification's form, which the Collector's exporter logs)."""
    reply = otlp_reply(response_type, rejected_field)

    def answer(outcome: Outcome, media_type: str) -> bytes:
        data = reply(outcome)
        if media_type == PROTOBUF:
            return data
        return json.dumps(json_format.MessageToDict(response_type.FromString(data))).encode()
    return answer


def _service(module: Any, name: str) -> str:
    return str(module.DESCRIPTOR.services_by_name[name].full_name)


_ERRORS = _service(ingest_pb2, "ErrorService")

SIGNALS: tuple[Signal, ...] = (
    Signal("traces", handle_traces,
           HttpDoor("/ingest/v1/traces", (PROTOBUF, JSON), _otlp_body, otlp_path="/v1/traces",
                    partial=_otlp_partial(trace_service_pb2.ExportTraceServiceResponse,
                                          "rejected_spans")),
           GrpcDoor(_service(trace_service_pb2, "TraceService"), "Export", _otlp_proto,
                    otlp_reply(trace_service_pb2.ExportTraceServiceResponse, "rejected_spans")),
           (limits.SPAN,)),
    Signal("logs", handle_logs,
           HttpDoor("/ingest/v1/logs", (PROTOBUF, JSON), _otlp_body, otlp_path="/v1/logs",
                    partial=_otlp_partial(logs_service_pb2.ExportLogsServiceResponse,
                                          "rejected_log_records")),
           GrpcDoor(_service(logs_service_pb2, "LogsService"), "Export", _otlp_proto,
                    otlp_reply(logs_service_pb2.ExportLogsServiceResponse,
                               "rejected_log_records")),
           (limits.LOG,)),
    Signal("metrics", handle_metrics,
           HttpDoor("/ingest/v1/metrics", (PROTOBUF, JSON), _otlp_body,
                    otlp_path="/v1/metrics",
                    partial=_otlp_partial(metrics_service_pb2.ExportMetricsServiceResponse,
                                          "rejected_data_points")),
           GrpcDoor(_service(metrics_service_pb2, "MetricsService"), "Export", _otlp_proto,
                    otlp_reply(metrics_service_pb2.ExportMetricsServiceResponse,
                               "rejected_data_points")),
           (limits.METRIC,)),
    Signal("errors", handle_error,
           HttpDoor("/ingest/errors", (JSON,), _json_body),
           GrpcDoor(_ERRORS, "Report", json_document(ingest_pb2.ErrorRecord), sounding_reply),
           (limits.ERROR,)),
    Signal("errors_batch", handle_error_batch,
           HttpDoor("/ingest/errors/batch", (JSON,), _json_body),
           GrpcDoor(_ERRORS, "ReportBatch", json_document(ingest_pb2.ErrorBatch),
                    sounding_reply),
           (limits.ERROR,)),
    Signal("deploys", handle_deploy,
           HttpDoor("/ingest/deploys", (JSON,), _json_body),
           GrpcDoor(_service(ingest_pb2, "DeployService"), "Record",
                    json_document(ingest_pb2.DeployRecord), sounding_reply)),
    Signal("requests", handle_requests,
           HttpDoor("/ingest/requests", (JSON,), _json_body),
           GrpcDoor(_service(ingest_pb2, "RequestService"), "ReportBatch",
                    json_document(ingest_pb2.RequestBatch), sounding_reply),
           (limits.METRIC,)),
)
