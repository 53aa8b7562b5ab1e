"""receiver/grpc/messages.py, pure: request bytes into a signal's document, and a
signal's Outcome into the reply (tests/receiver/grpc/test_custom.py runs both
through the real server)."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from model.errors import InvalidInput
from proto.sounding.v1 import ingest_pb2
from receiver.grpc.messages import ACCEPTED, json_document, otlp_reply, sounding_reply
from receiver.signals.outcome import BatchResult, Outcome


def test_a_message_becomes_its_http_json_body() -> None:
    body = ingest_pb2.DeployRecord(git_sha="abc", env="").SerializeToString()
    # `optional` fields keep "set to empty" apart from "absent", as JSON does.
    assert json_document(ingest_pb2.DeployRecord)(body) == {"git_sha": "abc", "env": ""}


def test_a_map_becomes_an_object_present_when_empty() -> None:
    record = ingest_pb2.ErrorRecord(environment="prod", tags={"os": "Linux", "k": ""})
    document = json_document(ingest_pb2.ErrorRecord)(record.SerializeToString())
    assert (document["environment"], document["tags"]) == ("prod", {"os": "Linux", "k": ""})
    assert json_document(ingest_pb2.ErrorRecord)(b"")["tags"] == {}


def test_undecodable_bytes_are_invalid_input_naming_the_message() -> None:
    with pytest.raises(InvalidInput) as caught:
        json_document(ingest_pb2.ErrorBatch)(b"\xff\xff\xff")
    assert caught.value.message == "the request is not a valid sounding.v1.ErrorBatch"
    assert caught.value.details[0]["field"] == "request"


def test_sounding_replies() -> None:
    assert sounding_reply(Outcome()) == ACCEPTED
    reply = ingest_pb2.BatchResult.FromString(sounding_reply(Outcome(batch=BatchResult(
        2, [{"index": 1, "details": [{"field": "errors[1].message", "error": "is required"}]}]))))
    assert (reply.accepted, reply.rejected) == (2, 1)
    (item,) = reply.rejected_items
    assert item.index == 1
    assert [(d.field, d.error) for d in item.details] == [("errors[1].message", "is required")]


def test_otlp_reply_carries_a_partial_success_only_when_records_were_dropped() -> None:
    reply = otlp_reply(ExportTraceServiceResponse, "rejected_spans")
    assert reply(Outcome()) == b""
    response = ExportTraceServiceResponse.FromString(
        reply(Outcome(dropped=2, reasons=("a: bad", "b: " + "x" * 2000))))
    assert response.partial_success.rejected_spans == 2
    assert response.partial_success.error_message.startswith("a: bad; b: xx")
    assert len(response.partial_success.error_message) == 1024
