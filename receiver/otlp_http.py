"""OTLP/HTTP traces: POST /ingest/v1/traces (and /v1/traces on the OTLP port).

Protobuf or OTLP/JSON, optionally compressed. Success is 202 with an empty body,
as the ingestion contract says; an empty body is also a valid (empty)
ExportTraceServiceResponse for protobuf clients.
"""

from __future__ import annotations

from receiver.decode_otlp import decode_traces_body
from receiver.handlers import JSON, PROTOBUF, IngestHandler
from sounding import metrics
from sounding.errors import InvalidInput
from sounding.pipeline import Pipeline
from sounding.records import Batch

# What a decode worker runs on a large body: the same pure function as below.
DECODE_TRACES = "receiver.decode_otlp:decode_traces_body"


def _count_dropped(dropped: int, kept: bool, reasons: list[str]) -> None:
    """Dropped spans are counted; a request whose every span was dropped is InvalidInput
    (HTTP 400, gRPC INVALID_ARGUMENT)."""
    if dropped:
        metrics.DROPPED.labels("spans", "invalid").inc(dropped)
        if not kept:
            raise InvalidInput("no span in the request could be kept",
                               [{"field": reason.split(": ", 1)[0],
                                 "error": reason.split(": ", 1)[1]} for reason in reasons])


async def consume_traces(body: bytes, protobuf: bool, batch: Batch, pipeline: Pipeline
                         ) -> tuple[int, list[str]]:
    """Decode an OTLP trace request and hand its spans on; shared by OTLP/HTTP and
    OTLP/gRPC (receiver/otlp_grpc.py). A large body is decoded and processed by a
    decode worker (sounding/offload.py), a small one here. Returns the number of
    spans dropped and the first reasons, for OTLP's partial success."""
    pool = pipeline.decode_pool
    if pool is not None and pool.wants(len(body)):
        metrics.OFFLOADED.inc()
        result = await pool.submit(DECODE_TRACES, (protobuf,), batch, "spans", body)
        _count_dropped(result.dropped, result.results is not None, result.reasons)
        if result.results is not None:
            await pipeline.consume_prepared(result.results)
        return result.dropped, result.reasons
    decoded = decode_traces_body(body, protobuf)
    _count_dropped(decoded.dropped, bool(decoded.spans), decoded.reasons)
    batch.spans = decoded.spans
    await pipeline.consume(batch)
    return decoded.dropped, decoded.reasons


class TracesHandler(IngestHandler):
    endpoint = "traces"
    content_types = (PROTOBUF, JSON)

    async def ingest(self, body: bytes) -> None:
        await consume_traces(body, self.media_type == PROTOBUF, self.new_batch(body),
                             self.ctx.pipeline)
