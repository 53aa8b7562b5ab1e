"""One JSON POST to a webhook-like URL and what its answer means for an alert: the
part the webhook and Slack destinations share. Sending is runtime/httppost.py's
(redirects are not followed: a signed alert goes only where it was configured to
go), Retry-After is read by runtime/retry.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime import httppost
from runtime.retry import Failed, Retry, SendResult, Sent, parse_retry_after

# Besides 5xx: "too many requests", "request timeout", "too early" say try later.
RETRYABLE_4XX = frozenset({408, 425, 429})
USER_AGENT = "Sounding-Alerts/1"


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect_s: float = 5.0
    request_s: float = 10.0

    @classmethod
    def of(cls, config: dict[str, Any]) -> Timeouts:
        return cls(float(config.get("connect_timeout_s") or 5.0),
                   float(config.get("timeout_s") or 10.0))


def outcome_of(code: int, retry_after: str | None) -> SendResult:
    """What an HTTP status means for the alert. Pure."""
    if 200 <= code < 300:
        return Sent()
    if code >= 500 or code in RETRYABLE_4XX:
        return Retry(parse_retry_after(retry_after), f"http {code}")
    if 300 <= code < 400:
        return Failed(f"http {code} (redirects are not followed)")
    return Failed(f"http {code}")


async def post_json(url: str, body: bytes, headers: dict[str, str], timeouts: Timeouts,
                    ca_file: str | None = None) -> SendResult:
    # The event loop's shared client; a send cancelled at shutdown leaves the
    # delivery leased, then due again.
    answer = await httppost.post(
        httppost.shared_client(), url, body,
        {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers},
        connect_timeout=timeouts.connect_s, request_timeout=timeouts.request_s,
        tls=httppost.TLS(ca_file))
    if isinstance(answer, httppost.Unanswered):
        if answer.why == "untrusted":  # configuration, not weather: retrying won't help
            return Failed("tls: certificate not trusted")
        if answer.why == "timeout":
            return Retry(None, "timeout")
        return Retry(None, f"connection: {answer.error}" if answer.error else "connection")
    return outcome_of(answer.code, answer.headers.get("Retry-After"))
