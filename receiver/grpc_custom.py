"""Sounding's own signals over gRPC (proto/sounding/v1/ingest.proto): errors, error
batches, deploys and request metrics.

Each message is turned into the JSON-like dict its HTTP endpoint takes and checked
by the same pure decoders (receiver/decode_custom.py), so both transports accept
and refuse exactly the same records, with the same problems named.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from proto.sounding.v1 import ingest_pb2
from receiver import fields
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
TIMESTAMP = "google.protobuf.Timestamp"
STRUCT = "google.protobuf.Struct"


def as_json(message: Message) -> dict[str, Any]:
    """The message as its HTTP endpoint's JSON body: proto field names, `optional`
    fields absent when unset, repeated fields always present.

    Written out rather than json_format.MessageToDict, which raises on what a
    client may well send (a Timestamp outside years 1-9999 or with negative nanos,
    a NaN in a Struct) and so turned bad input into INTERNAL. Here a Timestamp
    stays (seconds, nanos) for the decoder's time rule, and a Struct's numbers
    stay floats for its finite-number rule: both then name the field, as over HTTP.
    """
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        name = field.name
        value = getattr(message, name)
        kind = field.message_type
        if field.is_repeated:
            out[name] = [as_json(item) for item in value] if kind else list(value)
        elif kind is None:
            if not field.has_presence or message.HasField(name):
                out[name] = value
        elif message.HasField(name):
            if kind.full_name == TIMESTAMP:
                out[name] = fields.SecondsNanos(value.seconds, value.nanos)
            elif kind.full_name == STRUCT:
                out[name] = struct_value(value)
            else:
                out[name] = as_json(value)
    return out


def struct_value(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A google.protobuf.Struct as the JSON object it stands for. Its nesting is
    bounded by protobuf's own parse limit (100 messages, so 50 levels here)."""
    return {key: _value(item) for key, item in struct.fields.items()}


def _value(value: struct_pb2.Value) -> Any:
    which = value.WhichOneof("kind")
    if which == "number_value":
        number = value.number_value
        # A Struct has only doubles; a client that sent 3 means 3, as in a JSON body.
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if which == "struct_value":
        return struct_value(value.struct_value)
    if which == "list_value":
        return [_value(item) for item in value.list_value.values]
    if which == "string_value" or which == "bool_value":
        return getattr(value, which)
    return None


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
