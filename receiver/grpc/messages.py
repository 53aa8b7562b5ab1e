"""The gRPC door's framing, pure: request bytes into the document a signal takes,
and a signal's Outcome into the reply message.

Sounding's own messages (proto/sounding/v1/ingest.proto) are turned into the
JSON-like dict their HTTP endpoint takes, then checked by the same signal handler
and pure decoders (receiver/signals/, receiver/custom/decode.py), so both doors
accept and refuse exactly the same records, with the same problems named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError, Message

from model.errors import InvalidInput
from proto.sounding.v1 import ingest_pb2
from receiver import fields
from receiver.signals.outcome import Outcome

ACCEPTED = ingest_pb2.Accepted().SerializeToString()
# OTLP's partial success: the exporter logs the message, so it is kept short.
MAX_PARTIAL_MESSAGE = 1024
TIMESTAMP = "google.protobuf.Timestamp"
STRUCT = "google.protobuf.Struct"
LIST = "google.protobuf.ListValue"  # an error's exceptions: the JSON array it stands for


def as_json(message: Message) -> dict[str, Any]:
    """The message as its HTTP endpoint's JSON body: proto field names, `optional`
    fields absent when unset, repeated fields and maps always present.

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
        if kind is not None and kind.GetOptions().map_entry:
            # A map of scalars (an error's tags) is its JSON object; {} when none was sent.
            out[name] = dict(value)
        elif field.is_repeated:
            out[name] = [as_json(item) for item in value] if kind else list(value)
        elif kind is None:
            if not field.has_presence or message.HasField(name):
                out[name] = value
        elif message.HasField(name):
            if kind.full_name == TIMESTAMP:
                out[name] = fields.SecondsNanos(value.seconds, value.nanos)
            elif kind.full_name == STRUCT:
                out[name] = struct_value(value)
            elif kind.full_name == LIST:
                out[name] = [_value(item) for item in value.values]
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


def parse(message: Message, body: bytes) -> Message:
    """Fill `message` from the request bytes; undecodable bytes are InvalidInput."""
    try:
        message.ParseFromString(body)
    except (DecodeError, ValueError) as exc:
        name = message.DESCRIPTOR.full_name
        raise InvalidInput(f"the request is not a valid {name}",
                           [{"field": "request", "error": str(exc) or "undecodable"}]) from exc
    return message


def json_document(message_type: type[Message]) -> Callable[[bytes], Any]:
    """Request bytes of `message_type` -> the JSON body its HTTP endpoint takes."""
    def document(body: bytes) -> Any:
        return as_json(parse(message_type(), body))
    return document


def sounding_reply(outcome: Outcome) -> bytes:
    """`Accepted`, or a `BatchResult` for a batch answered item by item."""
    result = outcome.batch
    if result is None:
        return ACCEPTED
    return ingest_pb2.BatchResult(
        accepted=result.accepted, rejected=len(result.rejected),
        rejected_items=[ingest_pb2.RejectedItem(
            index=item["index"],
            details=[ingest_pb2.FieldProblem(field=d["field"], error=d["error"])
                     for d in item["details"]])
            for item in result.rejected],
    ).SerializeToString()


def otlp_reply(response_type: type[Message], rejected_field: str
               ) -> Callable[[Outcome], bytes]:
    """An OTLP Export reply; records dropped alone become its partial success
    (`rejected_field`: rejected_spans, rejected_log_records, rejected_data_points),
    which the exporter logs and does not retry."""
    def reply(outcome: Outcome) -> bytes:
        response = response_type()
        if outcome.dropped:
            partial = response.partial_success  # type: ignore[attr-defined]
            setattr(partial, rejected_field, outcome.dropped)
            partial.error_message = "; ".join(outcome.reasons)[:MAX_PARTIAL_MESSAGE]
        return response.SerializeToString()
    return reply
