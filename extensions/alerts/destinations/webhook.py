"""The webhook destination: the alert's JSON (message.webhook_body), POSTed and signed
(signature.py) with the destination's secret, its id in `Sounding-Alert-Id`."""

from __future__ import annotations

import time
from typing import Any

from extensions.alerts import signature
from extensions.alerts.destinations.jsonpost import Timeouts, post_json
from extensions.alerts.message import Message, webhook_body
from runtime.retry import SendResult

ALERT_ID_HEADER = "Sounding-Alert-Id"


class WebhookDestination:
    type = "webhook"

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self._url: str = config["url"]
        self._secret: str = config["secret"]
        self._timeouts = Timeouts.of(config)
        self._ca_file: str | None = config.get("ca_file") or None

    def __repr__(self) -> str:  # never the URL or the secret, even in a traceback
        return f"WebhookDestination({self.name!r})"

    async def send(self, message: Message) -> SendResult:
        body = webhook_body(message)
        headers = {signature.HEADER: signature.sign(self._secret, body, int(time.time())),
                   ALERT_ID_HEADER: message.id}
        return await post_json(self._url, body, headers, self._timeouts, self._ca_file)
