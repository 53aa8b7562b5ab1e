"""The webhook destination against a real local HTTP receiver: the signed JSON it
posts, and what each answer (or no answer) comes to."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

from extensions.alerts.destinations import build
from extensions.alerts.message import Digest, Message, webhook_body
from runtime.retry import Failed, Retry, Sent
from tests.extensions.alerts.facts import alert, alerts
from tests.extensions.alerts.test_signature import recipe
from tests.support.recorder import Answer, recording

SECRET = "0123456789abcdef-webhook"


def _send(url: str, message: Message, **config: Any) -> Any:
    destination = build({"name": "ops-hook", "type": "webhook", "url": url,
                         "secret": SECRET, **config})
    return asyncio.run(destination.send(message))


def test_the_alert_is_posted_signed_with_its_id() -> None:
    a = alert()
    with recording() as receiver:
        assert _send(receiver.url + "/hook?token=abc", a) == Sent()
    [request] = receiver.requests
    assert request.method == "POST" and request.path == "/hook?token=abc"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["Sounding-Alert-Id"] == a.id
    assert request.body == webhook_body(a)
    assert json.loads(request.body)["id"] == a.id
    assert recipe(SECRET, request.body, request.headers["Sounding-Signature"],
                  int(time.time()))


def test_a_digest_is_posted_with_every_alert() -> None:
    digest = Digest(alerts(100))
    with recording() as receiver:
        assert _send(receiver.url, digest) == Sent()
    [request] = receiver.requests
    document = json.loads(request.body)
    assert document["type"] == "digest"
    assert [a["id"] for a in document["alerts"]] == [a.id for a in digest.alerts]
    assert request.headers["Sounding-Alert-Id"] == digest.id
    assert recipe(SECRET, request.body, request.headers["Sounding-Signature"],
                  int(time.time()))


def test_each_answer_comes_to_its_outcome() -> None:
    answers: list[Answer] = [
        200, 204, 500, 503, (503, {"Retry-After": "7"}), (429, {"Retry-After": "30"}), 429,
        408, 400, 404, 410, (302, {"Location": "https://elsewhere.example/"})]
    with recording(answers=answers) as receiver:
        outcomes = [_send(receiver.url, alert()) for _ in answers]
    assert outcomes == [
        Sent(), Sent(), Retry(None, "http 500"), Retry(None, "http 503"),
        Retry(7.0, "http 503"), Retry(30.0, "http 429"), Retry(None, "http 429"),
        Retry(None, "http 408"), Failed("http 400"), Failed("http 404"), Failed("http 410"),
        Failed("http 302 (redirects are not followed)")]
    assert len(receiver.requests) == len(answers)  # the redirect was not followed


def test_500_three_times_then_200_is_retry_three_times_then_sent() -> None:
    with recording(answers=[500, 500, 500, 200]) as receiver:
        outcomes = [_send(receiver.url, alert()) for _ in range(4)]
    assert [type(o) for o in outcomes] == [Retry, Retry, Retry, Sent]
    # Every attempt carries the same alert id and body: the receiver can deduplicate.
    assert len({r.headers["Sounding-Alert-Id"] for r in receiver.requests}) == 1
    assert len({r.body for r in receiver.requests}) == 1


def test_a_refused_connection_is_retry() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = _send(f"http://127.0.0.1:{port}/hook", alert())
    assert isinstance(outcome, Retry) and outcome.error.startswith("connection")
    assert str(port) not in outcome.error


def test_a_receiver_slower_than_the_timeout_is_retry() -> None:
    with recording(delay_s=1.0) as receiver:
        outcome = _send(receiver.url, alert(), timeout_s=0.2)
    assert outcome == Retry(None, "timeout")
