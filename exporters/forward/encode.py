"""A batch as the request bodies that carry it upstream. Pure: records in, bytes
out, no I/O; the decode workers run it off the event loop (the exporter's
`preparation`), and `export` runs it inline for batches decoded on the loop.

- Spans: one OTLP ExportTraceServiceRequest (protobuf), grouped by resource and
  scope, for the OTLP/HTTP path of a gateway or any OTLP backend. A span no stage
  looked into is copied from the message it arrived in, attributes, events, links
  and all; the record's columns (ids, name, kind, times, status) are written over it,
  since a processor may have changed them.
- Log records: one OTLP ExportLogsServiceRequest (protobuf, exporters/forward/
  encode_logs.py), built as for spans.
- Metric points: one OTLP ExportMetricsServiceRequest (exporters/forward/
  encode_metrics.py), each point as it arrived, cumulative or delta.
- Errors, deploys, request metrics: the JSON documents of Sounding's own endpoints
  (docs/sending-data.md), every field of the contract (an error's details
  included: level, exceptions, context, and its occurrence key as `event_id`), times
  as ISO 8601 with microseconds, so that the gateway decodes exactly what this
  collector did.

What processors derive (error groups, the reopen check) is not sent: the gateway
derives it again from the records.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from exporters.forward.encode_logs import encode_logs
from exporters.forward.encode_metrics import encode_metrics
from exporters.forward.otlp_groups import ScopeGroups
from model.fingerprint import decide
from model.otlp_encode import IN_REQUEST, fill_span, span_columns
from model.records import LEVELS, Batch, Deploy, ErrorEvent, RequestMetric, Span
from storage.outbox import Entry

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# What the gateway's endpoints take in one request (receiver/custom/decode.py).
MAX_ERRORS_PER_BODY = 1_000
MAX_REQUESTS_PER_BODY = 10_000
# gzip level 1: most of the ratio for a fraction of level 9's time.
GZIP_LEVEL = 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class Encoded:
    """What the exporter enqueues for one batch, and what it could not encode."""

    entries: list[Entry] = field(default_factory=list)
    unencodable: dict[str, int] = field(default_factory=dict)

    @property
    def records(self) -> int:
        return sum(entry.records for entry in self.entries)

    @property
    def size(self) -> int:
        return sum(len(entry.body) for entry in self.entries)


def iso_us(ts_us: int) -> str:
    """2026-11-23T20:04:31.123456Z, exact to the microsecond (no float on the way)."""
    return (_EPOCH + timedelta(microseconds=ts_us)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _compress(body: bytes, use_gzip: bool) -> tuple[bytes, str]:
    return (gzip.compress(body, GZIP_LEVEL, mtime=0), "gzip") if use_gzip else (body, "")


# --- spans ---------------------------------------------------------------------

def encode_spans(spans: list[Span]) -> tuple[ExportTraceServiceRequest, int]:
    """(the request, spans that could not be encoded)."""
    request = ExportTraceServiceRequest()
    # Refused: values nested past what protobuf reads back.
    failed = ScopeGroups(request.resource_spans, "scope_spans").add_each(
        spans, "spans", _fill_span, (ValueError,))
    return request, failed


def _fill_span(out: Any, span: Span) -> None:
    fill_span(out, span, IN_REQUEST)
    span_columns(out, span)


# --- Sounding's own signals ----------------------------------------------------

def _drop_none(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if value is not None}


# What the gateway's /ingest/errors takes of an environment, release or service
# (docs/sending-data.md, "Environments, releases and tags on errors"); an OpenTelemetry resource
# may hold longer ones, which are cut rather than have the gateway refuse the error.
MAX_LABEL = 200


def _label(value: str | None) -> str | None:
    return value[:MAX_LABEL] if value else None


def error_document(error: ErrorEvent) -> dict[str, Any]:
    source = error.source_context
    return _drop_none({
        "exception_class": error.exception_class,
        "message": error.message,
        "backtrace": list(error.backtrace),
        # Without a grouping stage (a sidecar's pipeline) the error is still to be
        # grouped; the gateway's door takes a fingerprint as sent, so the one rule
        # decides it here.
        "fingerprint": error.fingerprint if error.grouping is None
        else decide(error.grouping, error.backtrace),
        "timestamp": iso_us(error.ts_us),
        "request_id": error.request_id,
        "user_id": error.user_id,
        "params": error.params,
        "source_context": None if source is None else {
            "file": source.file, "lineno": source.lineno,
            "context_line": source.context_line,
            "pre_context": list(source.pre_context),
            "post_context": list(source.post_context)},
        "trace_id": error.trace_id,
        "span_id": error.span_id,
        "environment": _label(error.environment),
        "release": _label(error.release),
        "service": _label(error.service),
        "tags": error.tags or None,
        # What a Sentry event carries, already bounded by this collector's door; the
        # gateway's door bounds them by the same rule, which changes nothing
        # (receiver/custom/error_details.py). The occurrence key travels as `event_id`, so
        # that the gateway keeps one copy of an error sent twice (a retried forward,
        # an SDK's retry through two sidecars). A level outside LEVELS (a plugin's)
        # is left out: the gateway would refuse the whole error for it.
        "level": error.level if error.level in LEVELS else None,
        "exceptions": error.exceptions or None,
        "context": error.context or None,
        "event_id": error.occurrence_key,
    })


def deploy_document(deploy: Deploy) -> dict[str, Any]:
    return _drop_none({
        "git_sha": deploy.git_sha,
        "version": deploy.version,
        "env": deploy.env,
        "deployer": deploy.deployer,
        "description": deploy.description,
        "service": deploy.service,
        "timestamp": iso_us(deploy.ts_us),
    })


def request_document(request: RequestMetric) -> dict[str, Any]:
    return _drop_none({
        "method": request.method,
        "route": request.route,
        "status": request.status,
        "duration_ms": request.duration_ms,
        "timestamp": iso_us(request.ts_us),
        # "" is what the decoder makes of an absent label: send it absent.
        "service": request.service or None,
        "env": request.env or None,
        "request_id": request.request_id,
        "trace_id": request.trace_id,
    })


def _json_entries(signal: str, member: str, documents: list[dict[str, Any]], per_body: int,
                  use_gzip: bool) -> list[Entry]:
    entries = []
    for start in range(0, len(documents), per_body):
        chunk = documents[start:start + per_body]
        body, encoding = _compress(orjson.dumps({member: chunk}), use_gzip)
        entries.append(Entry(signal, body, JSON, encoding, len(chunk)))
    return entries


# --- the batch -----------------------------------------------------------------

def encode(batch: Batch, settings: dict[str, Any]) -> Encoded:
    """The bodies of `batch` for the signals in `settings["signals"]`; gzipped when
    `settings["gzip"]`. Leaves the batch as it found it."""
    signals = settings["signals"]
    use_gzip = bool(settings.get("gzip", True))
    out = Encoded()
    if "traces" in signals and batch.spans:
        request, failed = encode_spans(batch.spans)
        if failed:
            out.unencodable["traces"] = failed
        if failed < len(batch.spans):
            body, encoding = _compress(request.SerializeToString(), use_gzip)
            out.entries.append(Entry("traces", body, PROTOBUF, encoding,
                                     len(batch.spans) - failed))
    if "logs" in signals and batch.logs:
        logs_request, failed = encode_logs(batch.logs)
        if failed:
            out.unencodable["logs"] = failed
        if failed < len(batch.logs):
            body, encoding = _compress(logs_request.SerializeToString(), use_gzip)
            out.entries.append(Entry("logs", body, PROTOBUF, encoding,
                                     len(batch.logs) - failed))
    if "metrics" in signals and batch.metrics:
        metrics_request, failed = encode_metrics(batch.metrics)
        if failed:
            out.unencodable["metrics"] = failed
        if failed < len(batch.metrics):
            body, encoding = _compress(metrics_request.SerializeToString(), use_gzip)
            out.entries.append(Entry("metrics", body, PROTOBUF, encoding,
                                     len(batch.metrics) - failed))
    if "errors" in signals and batch.errors:
        out.entries += _json_entries("errors", "errors",
                                     [error_document(e) for e in batch.errors],
                                     MAX_ERRORS_PER_BODY, use_gzip)
    if "deploys" in signals:
        for deploy in batch.deploys:
            body, encoding = _compress(orjson.dumps(deploy_document(deploy)), use_gzip)
            out.entries.append(Entry("deploys", body, JSON, encoding, 1))
    if "requests" in signals and batch.requests:
        out.entries += _json_entries("requests", "requests",
                                     [request_document(r) for r in batch.requests],
                                     MAX_REQUESTS_PER_BODY, use_gzip)
    return out


def prepare(batch: Batch, settings: dict[str, Any]) -> Encoded:
    """The exporter's preparation (model/component.py), called in a decode worker."""
    return encode(batch, settings)
