"""One request upstream, and what its answer means for the queued row: sent,
retry later (and when), or refused for good.

The exporter-wide rule against Tornado (.importlinter) is about serving pages; this
module is the one place an exporter uses Tornado's HTTP *client*, an exception the
contract names.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest, HTTPResponse

from storage.outbox import Row

# Statuses that say "not now" (OTLP/HTTP's retryable list); every other 4xx or 5xx
# says the upstream will never take this body.
RETRYABLE = frozenset({429, 502, 503, 504})
# The longest Retry-After honoured: an upstream asking for a day is not obeyed blindly.
MAX_RETRY_AFTER = 3600.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """`sent`; or `retry` (after `retry_after` seconds if the upstream said, else
    the sender's backoff); or neither: refused for good, for `reason`."""

    sent: bool = False
    retry: bool = False
    retry_after: float | None = None
    reason: str = ""
    # Records the upstream took but refused one by one (OTLP partial_success).
    rejected: int = 0


Client = AsyncHTTPClient


def new_client() -> Client:
    # Our own instance: Tornado shares one per event loop otherwise, and closing a
    # shared one would close it for everybody.
    return AsyncHTTPClient(force_instance=True)


@dataclass(frozen=True, slots=True)
class Settings:
    headers: dict[str, str]
    timeout: float
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify: bool = True

    @classmethod
    def of(cls, config: dict[str, Any]) -> Settings:
        tls = config.get("tls") or {}
        return cls({str(k): str(v) for k, v in (config.get("headers") or {}).items()},
                   float(config["timeout_seconds"]), tls.get("ca_file") or None,
                   tls.get("cert_file") or None, tls.get("key_file") or None,
                   not tls.get("insecure_skip_verify", False))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    wait = when.timestamp() - (time.time() if now is None else now)
    return min(max(wait, 0.0), MAX_RETRY_AFTER)


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


def classify(code: int, headers: dict[str, str], body: bytes, signal: str) -> Outcome:
    """What an HTTP status means for the row that was sent. Pure."""
    if 200 <= code < 300:
        return Outcome(sent=True, rejected=rejected_records(
            body, headers.get("Content-Type", ""), signal))
    if code in RETRYABLE:
        return Outcome(retry=True, retry_after=parse_retry_after(headers.get("Retry-After")),
                       reason=f"http_{code}")
    return Outcome(reason=f"http_{code}")


def _retrieve(fetch: asyncio.Future[HTTPResponse]) -> None:
    if not fetch.cancelled():
        fetch.exception()  # retrieved: no "exception was never retrieved" at exit


async def post(client: Client, url: str, row: Row, settings: Settings) -> Outcome:
    headers = {**settings.headers, "Content-Type": row.content_type}
    if row.content_encoding:
        headers["Content-Encoding"] = row.content_encoding
    request = HTTPRequest(
        url, method="POST", body=row.body, headers=headers,
        connect_timeout=settings.timeout, request_timeout=settings.timeout,
        ca_certs=settings.ca_file, client_cert=settings.cert_file,
        client_key=settings.key_file, validate_cert=settings.verify,
        decompress_response=True, follow_redirects=False)
    fetch = client.fetch(request, raise_error=False)
    fetch.add_done_callback(_retrieve)
    try:
        # Shielded: a request cancelled at shutdown is left to finish or fail on its
        # own (its row stays queued), instead of Tornado logging the answer that
        # arrives for a cancelled future as an error with a traceback.
        response: HTTPResponse = await asyncio.shield(fetch)
    except HTTPClientError as exc:  # raised only for timeouts (code 599)
        return Outcome(retry=True, reason="timeout" if exc.code == 599 else f"http_{exc.code}")
    except OSError:  # refused, reset, unreachable, DNS, TLS handshake
        return Outcome(retry=True, reason="connection")
    if response.code == 599:  # no answer: a timeout or a connection closed early
        return Outcome(retry=True, reason="timeout" if response.error is not None
                       and "Timeout" in type(response.error).__name__ else "connection")
    return classify(response.code, dict(response.headers), response.body or b"", row.signal)
