"""The Slack destination: an incoming-webhook message (message_slack.slack_body).
Mattermost's and Rocket.Chat's incoming webhooks take the same body. The URL is the
secret here (Slack signs nothing), so it is never shown or logged."""

from __future__ import annotations

from typing import Any

from extensions.alerts.destinations.jsonpost import Timeouts, post_json
from extensions.alerts.message import Message
from extensions.alerts.message_slack import slack_body
from runtime.retry import SendResult


class SlackDestination:
    type = "slack"

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self._url: str = config["url"]
        self._timeouts = Timeouts.of(config)
        self._ca_file: str | None = config.get("ca_file") or None

    def __repr__(self) -> str:
        return f"SlackDestination({self.name!r})"

    async def send(self, message: Message) -> SendResult:
        return await post_json(self._url, slack_body(message), {}, self._timeouts,
                               self._ca_file)
