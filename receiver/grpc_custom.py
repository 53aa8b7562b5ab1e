"""Sounding's own signals over gRPC (proto/sounding/v1/ingest.proto): errors, error
batches, deploys and request metrics.

Each message is turned into the JSON-like dict its HTTP endpoint takes and checked
by the same pure decoders (receiver/decode_custom.py), so both transports accept
and refuse exactly the same records, with the same problems named.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from proto.sounding.v1 import ingest_pb2
from receiver.auth import Authenticator
from receiver.decode_custom import (
    Rejected,
    decode_deploy,
    decode_error,
    decode_error_batch,
    decode_request_batch,
)
from receiver.grpc_call import Call, service
from sounding import metrics
from sounding.pipeline import Pipeline
from sounding.timeutil import now_us

ACCEPTED = ingest_pb2.Accepted().SerializeToString()


def as_json(message: Message) -> dict[str, Any]:
    """The message as its HTTP endpoint's JSON body: proto field names, required
    fields absent when unset (they are `optional`), repeated fields always present."""
    obj = MessageToDict(message, preserving_proto_field_name=True,
                        always_print_fields_with_no_presence=True)
    return _integral_numbers(obj)


def _integral_numbers(value: Any) -> Any:
    # google.protobuf.Struct (the `params` field) has only doubles; a client that
    # sent 3 means 3, as it would in a JSON body.
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral_numbers(v) for v in value]
    return value


def _batch_result(accepted: int, rejected: Rejected, signal: str) -> bytes:
    if rejected:
        metrics.DROPPED.labels(signal, "invalid").inc(len(rejected))
    return ingest_pb2.BatchResult(
        accepted=accepted, rejected=len(rejected),
        rejected_items=[ingest_pb2.RejectedItem(
            index=item["index"],
            details=[ingest_pb2.FieldProblem(field=d["field"], error=d["error"])
                     for d in item["details"]])
            for item in rejected],
    ).SerializeToString()


async def report_error(call: Call) -> bytes:
    obj = as_json(call.parse(ingest_pb2.ErrorRecord()))
    batch = call.new_batch()
    batch.errors.append(decode_error(obj, now_us(), call.trace_link()))
    await call.pipeline.consume(batch)
    return ACCEPTED


async def report_error_batch(call: Call) -> bytes:
    obj = as_json(call.parse(ingest_pb2.ErrorBatch()))
    errors, rejected = decode_error_batch(obj, now_us(), call.trace_link())
    batch = call.new_batch()
    batch.errors.extend(errors)
    await call.pipeline.consume(batch)
    return _batch_result(len(errors), rejected, "errors")


async def record_deploy(call: Call) -> bytes:
    obj = as_json(call.parse(ingest_pb2.DeployRecord()))
    batch = call.new_batch()
    batch.deploys.append(decode_deploy(obj, now_us()))
    await call.pipeline.consume(batch)
    return ACCEPTED


async def report_requests(call: Call) -> bytes:
    obj = as_json(call.parse(ingest_pb2.RequestBatch()))
    requests, rejected = decode_request_batch(obj, now_us(), call.trace_link())
    batch = call.new_batch()
    batch.requests.extend(requests)
    await call.pipeline.consume(batch)
    return _batch_result(len(requests), rejected, "requests")


def _service_name(name: str) -> str:
    return str(ingest_pb2.DESCRIPTOR.services_by_name[name].full_name)


def custom_services(pipeline: Pipeline, auth: Authenticator) -> list[grpc.GenericRpcHandler]:
    return [
        service(_service_name("ErrorService"), {
            "Report": ("grpc_errors", report_error),
            "ReportBatch": ("grpc_errors_batch", report_error_batch),
        }, pipeline, auth),
        service(_service_name("DeployService"), {
            "Record": ("grpc_deploys", record_deploy),
        }, pipeline, auth),
        service(_service_name("RequestService"), {
            "ReportBatch": ("grpc_requests", report_requests),
        }, pipeline, auth),
    ]
