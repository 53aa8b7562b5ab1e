"""One POST and what came of it (runtime/httppost.py), against real local servers:
the forward exporter's client and the alert destinations both send through it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tornado.httpclient import HTTPResponse

from runtime import httppost
from tests.support.recorder import free_port, recording
from tests.support.smtp import self_signed_cert
from tests.support.tls_server import serving_tls


def _post(url: str, timeout: float = 5.0,
          tls: httppost.TLS | None = None) -> HTTPResponse | httppost.Unanswered:
    async def run() -> HTTPResponse | httppost.Unanswered:
        client = httppost.new_client()
        try:
            return await httppost.post(client, url, b'{"a": 1}',
                                       {"Content-Type": "application/json"},
                                       connect_timeout=timeout, request_timeout=timeout,
                                       tls=tls or httppost.TLS())
        finally:
            client.close()
    return asyncio.run(run())


def test_an_answer_is_returned_whatever_its_status() -> None:
    with recording(answers=[(503, {"Retry-After": "2"}), 400]) as receiver:
        first, second = _post(receiver.url), _post(receiver.url)
    assert isinstance(first, HTTPResponse) and isinstance(second, HTTPResponse)
    assert (first.code, first.headers.get("Retry-After")) == (503, "2")
    assert second.code == 400
    assert [r.body for r in receiver.requests] == [b'{"a": 1}'] * 2


def test_a_redirect_is_not_followed() -> None:
    with recording(answers=[(302, {"Location": "http://127.0.0.1:9/elsewhere"})]) as receiver:
        answer = _post(receiver.url)
    assert isinstance(answer, HTTPResponse) and answer.code == 302
    assert len(receiver.requests) == 1


def test_a_refused_connection_is_unanswered() -> None:
    answer = _post(f"http://127.0.0.1:{free_port()}/")
    assert answer == httppost.Unanswered("connection", "ConnectionRefusedError")


def test_a_server_slower_than_the_timeout_is_unanswered() -> None:
    with recording(delay_s=1.0) as receiver:
        answer = _post(receiver.url, timeout=0.2)
    assert isinstance(answer, httppost.Unanswered) and answer.why == "timeout"


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_cert(tmp_path_factory.mktemp("tls"))


def test_an_untrusted_certificate_is_said_apart(cert: tuple[Path, Path]) -> None:
    """Configuration, not weather: each feature decides what it means (the forward
    exporter keeps the row queued, an alert fails)."""
    with serving_tls(*cert) as url:
        untrusted = _post(url)
        trusted = _post(url, tls=httppost.TLS(ca_file=str(cert[0])))
    assert untrusted == httppost.Unanswered("untrusted", "SSLCertVerificationError")
    assert isinstance(trusted, HTTPResponse) and trusted.code == 204
