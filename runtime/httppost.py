"""One POST over Tornado's HTTP client, and what came of it: an answer (any status),
or none and why. The part of sending that the forward exporter's client
(exporters/forward/client.py) and the alert webhook and Slack destinations
(extensions/alerts/destinations/jsonpost.py) share; each decides what a
status or a missing answer means for what it sends (retry, or give up for good).

Redirects are never followed: a body goes only where it was configured to go.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest, HTTPResponse

Client = AsyncHTTPClient


def new_client() -> Client:
    """A client of one's own, to close at shutdown: Tornado shares one per event loop
    otherwise, and closing a shared one would close it for everybody."""
    return AsyncHTTPClient(force_instance=True)


def shared_client() -> Client:
    """The event loop's shared client: never to be closed, so nobody else's requests
    are cut."""
    return AsyncHTTPClient()


@dataclass(frozen=True, slots=True)
class Unanswered:
    """No answer. `why` is "timeout", "connection" (refused, reset, unreachable, DNS,
    a TLS handshake that failed, a connection closed early) or "untrusted" (the
    server's certificate did not verify: configuration, not weather); `error` names
    the exception's type, never its text (which may hold the URL)."""

    why: str
    error: str = ""


@dataclass(frozen=True, slots=True)
class TLS:
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify: bool = True


def _retrieve(fetch: asyncio.Future[HTTPResponse]) -> None:
    if not fetch.cancelled():
        fetch.exception()  # retrieved: no "exception was never retrieved" at exit


async def post(client: Client, url: str, body: bytes, headers: dict[str, str], *,
               connect_timeout: float, request_timeout: float,
               tls: TLS = TLS()) -> HTTPResponse | Unanswered:
    request = HTTPRequest(
        url, method="POST", body=body, headers=headers,
        connect_timeout=connect_timeout, request_timeout=request_timeout,
        ca_certs=tls.ca_file, client_cert=tls.cert_file, client_key=tls.key_file,
        validate_cert=tls.verify, decompress_response=True, follow_redirects=False)
    fetch = client.fetch(request, raise_error=False)
    fetch.add_done_callback(_retrieve)
    try:
        # Shielded: a request cancelled at shutdown is left to finish or fail on its
        # own (what it carried stays queued), instead of Tornado logging the answer
        # that arrives for a cancelled future as an error with a traceback.
        response: HTTPResponse = await asyncio.shield(fetch)
    except HTTPClientError as exc:  # raised only for timeouts (599) with raise_error=False
        return Unanswered("timeout" if exc.code == 599 else "connection", type(exc).__name__)
    except ssl.SSLCertVerificationError as exc:
        return Unanswered("untrusted", type(exc).__name__)
    except OSError as exc:
        return Unanswered("connection", type(exc).__name__)
    if response.code == 599:  # no answer: a timeout or a connection closed early
        error = response.error
        if error is not None and "Timeout" in type(error).__name__:
            return Unanswered("timeout", type(error).__name__)
        return Unanswered("connection", "" if error is None else type(error).__name__)
    return response
