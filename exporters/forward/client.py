"""One request upstream, and what its answer means for the queued row: sent,
retry later (and when), or refused for good (runtime/retry.py's Sent, Retry, Failed;
an error here is the reason /metrics counts it under: "http_503", "timeout",
"connection").

Sending is runtime/httppost.py's (Tornado's HTTP client), Retry-After is read by
runtime/retry.py; what is decided here is this exporter's: which statuses are worth
another try, and that a row with no answer (even from a server whose certificate
does not verify) stays queued, since an acknowledged body is never dropped for a
setting that can still be fixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from runtime import httppost
from runtime.retry import Failed, Retry, SendResult, Sent, parse_retry_after
from storage.outbox import Row

# Statuses that say "not now" (OTLP/HTTP's retryable list); every other 4xx or 5xx
# says the upstream will never take this body.
RETRYABLE = frozenset({429, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class Settings:
    headers: dict[str, str]
    timeout: float
    tls: httppost.TLS = httppost.TLS()

    @classmethod
    def of(cls, config: dict[str, Any]) -> Settings:
        tls = config.get("tls") or {}
        return cls({str(k): str(v) for k, v in (config.get("headers") or {}).items()},
                   float(config["timeout_seconds"]), httppost.TLS(
                       tls.get("ca_file") or None, tls.get("cert_file") or None,
                       tls.get("key_file") or None, not tls.get("insecure_skip_verify", False)))


# The OTLP signals: their reply message and its partial success's count.
OTLP_REPLIES: dict[str, tuple[type[Message], str]] = {
    "traces": (ExportTraceServiceResponse, "rejected_spans"),
    "logs": (ExportLogsServiceResponse, "rejected_log_records"),
}


def rejected_records(response_body: bytes, content_type: str, signal: str) -> int:
    """OTLP partial success: records the backend took the request with but refused."""
    reply_of = OTLP_REPLIES.get(signal)
    if reply_of is None or not response_body or "protobuf" not in content_type:
        return 0
    reply_type, rejected = reply_of
    try:
        reply = reply_type.FromString(response_body)
    except Exception:  # noqa: BLE001 - a reply we cannot read is not a refusal
        return 0
    return int(getattr(reply.partial_success, rejected))  # type: ignore[attr-defined]


def classify(code: int, headers: dict[str, str], body: bytes, signal: str) -> SendResult:
    """What an HTTP status means for the row that was sent. Pure."""
    if 200 <= code < 300:
        return Sent(rejected_records(body, headers.get("Content-Type", ""), signal))
    if code in RETRYABLE:
        return Retry(parse_retry_after(headers.get("Retry-After")), f"http_{code}")
    return Failed(f"http_{code}")


async def post(client: httppost.Client, url: str, row: Row, settings: Settings) -> SendResult:
    headers = {**settings.headers, "Content-Type": row.content_type}
    if row.content_encoding:
        headers["Content-Encoding"] = row.content_encoding
    answer = await httppost.post(client, url, row.body, headers,
                                 connect_timeout=settings.timeout,
                                 request_timeout=settings.timeout, tls=settings.tls)
    if isinstance(answer, httppost.Unanswered):
        # An untrusted certificate too: the row waits for the setting to be fixed.
        return Retry(None, "timeout" if answer.why == "timeout" else "connection")
    return classify(answer.code, dict(answer.headers), answer.body or b"", row.signal)
