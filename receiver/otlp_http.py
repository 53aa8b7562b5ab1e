"""OTLP/HTTP traces: POST /ingest/v1/traces (and /v1/traces on the OTLP port).

Protobuf or OTLP/JSON, optionally compressed. Success is 202 with an empty body,
as the ingestion contract says; an empty body is also a valid (empty)
ExportTraceServiceResponse for protobuf clients.
"""

from __future__ import annotations

from receiver.decode_otlp import DecodedSpans, parse_proto, spans_from_json, spans_from_proto
from receiver.handlers import JSON, PROTOBUF, IngestHandler
from sounding import metrics
from sounding.errors import InvalidInput
from sounding.pipeline import Pipeline
from sounding.records import Batch


async def consume_spans(decoded: DecodedSpans, batch: Batch, pipeline: Pipeline) -> None:
    """Hand the kept spans on; shared by OTLP/HTTP and OTLP/gRPC (receiver/otlp_grpc.py).

    Dropped spans are counted; a request whose every span was dropped is InvalidInput
    (HTTP 400, gRPC INVALID_ARGUMENT).
    """
    if decoded.dropped:
        metrics.DROPPED.labels("spans", "invalid").inc(decoded.dropped)
        if not decoded.spans:
            raise InvalidInput("no span in the request could be kept",
                               [{"field": reason.split(": ", 1)[0],
                                 "error": reason.split(": ", 1)[1]}
                                for reason in decoded.reasons])
    batch.spans = decoded.spans
    await pipeline.consume(batch)


class TracesHandler(IngestHandler):
    endpoint = "traces"
    content_types = (PROTOBUF, JSON)

    async def ingest(self, body: bytes) -> None:
        if self.media_type == PROTOBUF:
            decoded = spans_from_proto(parse_proto(body))
        else:
            decoded = spans_from_json(self.json_body(body))
        await consume_spans(decoded, self.new_batch(body), self.ctx.pipeline)
