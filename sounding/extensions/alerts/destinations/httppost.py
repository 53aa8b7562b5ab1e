"""One JSON POST to a webhook-like URL and what its answer means: the part the webhook
and Slack destinations share.

Redirects are not followed: a signed alert goes only where it was configured to go.
"""

from __future__ import annotations

import asyncio
import email.utils
import ssl
import time
from dataclasses import dataclass
from typing import Any

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest, HTTPResponse

from sounding.extensions.alerts.destinations.outcome import Failed, Outcome, Retry, Sent

# Besides 5xx: "too many requests", "request timeout", "too early" say try later.
RETRYABLE_4XX = frozenset({408, 425, 429})
# The longest Retry-After honoured: a receiver asking for a day is not obeyed blindly.
MAX_RETRY_AFTER_S = 3600.0
USER_AGENT = "Sounding-Alerts/1"


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect_s: float = 5.0
    request_s: float = 10.0

    @classmethod
    def of(cls, config: dict[str, Any]) -> Timeouts:
        return cls(float(config.get("connect_timeout_s") or 5.0),
                   float(config.get("timeout_s") or 10.0))


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    wait = when.timestamp() - (time.time() if now is None else now)
    return min(max(wait, 0.0), MAX_RETRY_AFTER_S)


def outcome_of(code: int, retry_after: str | None) -> Outcome:
    """What an HTTP status means for the alert. Pure."""
    if 200 <= code < 300:
        return Sent()
    if code >= 500 or code in RETRYABLE_4XX:
        return Retry(retry_after_s(retry_after), f"http {code}")
    if 300 <= code < 400:
        return Failed(f"http {code} (redirects are not followed)")
    return Failed(f"http {code}")


def _retrieve(fetch: asyncio.Future[HTTPResponse]) -> None:
    if not fetch.cancelled():
        fetch.exception()  # retrieved: no "exception was never retrieved" at exit


async def post_json(url: str, body: bytes, headers: dict[str, str], timeouts: Timeouts,
                    ca_file: str | None = None) -> Outcome:
    request = HTTPRequest(
        url, method="POST", body=body,
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers},
        connect_timeout=timeouts.connect_s, request_timeout=timeouts.request_s,
        ca_certs=ca_file, follow_redirects=False, decompress_response=True)
    # Tornado's shared client of this event loop: never closed here, so nobody else's
    # requests are cut.
    fetch = AsyncHTTPClient().fetch(request, raise_error=False)
    fetch.add_done_callback(_retrieve)
    try:
        # Shielded: a send cancelled at shutdown finishes or fails on its own (the
        # delivery stays leased, then due again) instead of Tornado logging the
        # answer that arrives for a cancelled future.
        response = await asyncio.shield(fetch)
    except HTTPClientError as exc:  # only for timeouts (599) with raise_error=False
        return Retry(None, "timeout" if exc.code == 599 else f"http {exc.code}")
    except ssl.SSLCertVerificationError:  # configuration, not weather: retrying won't help
        return Failed("tls: certificate not trusted")
    except OSError as exc:  # refused, reset, unreachable, DNS, TLS handshake
        return Retry(None, f"connection: {type(exc).__name__}")
    if response.code == 599:  # no answer
        error = response.error
        if error is not None and "Timeout" in type(error).__name__:
            return Retry(None, "timeout")
        return Retry(None, f"connection: {type(error).__name__}")
    return outcome_of(response.code, response.headers.get("Retry-After"))
