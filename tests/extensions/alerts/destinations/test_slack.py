"""The Slack destination against a real local HTTP receiver: Slack's body, unsigned,
and Slack's answers to outcomes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from extensions.alerts.destinations import build
from extensions.alerts.message import Message
from extensions.alerts.message_slack import slack_body
from runtime.retry import Failed, Retry, Sent
from tests.extensions.alerts.facts import alert
from tests.support.recorder import Answer, recording


def _send(url: str, message: Message) -> Any:
    destination = build({"name": "team", "type": "slack", "url": url})
    return asyncio.run(destination.send(message))


def test_the_alert_is_posted_in_slack_format() -> None:
    a = alert()
    with recording() as receiver:
        assert _send(receiver.url + "/services/T0/B0/XYZ", a) == Sent()
    [request] = receiver.requests
    assert request.path == "/services/T0/B0/XYZ"
    assert request.body == slack_body(a)
    document = json.loads(request.body)
    assert document["text"] == "[shop] New error: KeyError: 'sku'"
    assert document["blocks"][0]["type"] == "header"
    assert "Sounding-Signature" not in request.headers


def test_slack_refusals_fail_and_rate_limits_retry() -> None:
    # Slack answers 404 no_service and 410 channel_is_archived for a dead URL, 429 with
    # Retry-After when it limits.
    answers: list[Answer] = [404, 410, 400, (429, {"Retry-After": "2"}), 502]
    with recording(answers=answers) as receiver:
        outcomes = [_send(receiver.url, alert()) for _ in answers]
    assert outcomes == [Failed("http 404"), Failed("http 410"), Failed("http 400"),
                        Retry(2.0, "http 429"), Retry(None, "http 502")]
