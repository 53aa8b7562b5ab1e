"""An alert as a Slack incoming-webhook message: `text` (the notification and the
fallback) plus `blocks` (what is shown). Mattermost and Rocket.Chat take the same body.
Pure.

Slack's limits shape it: a header holds 150 characters, a section 3,000, a message 50
blocks; a digest packs one line per alert into sections and says how many did not fit.
Every client string goes through `escape`, since `&`, `<` and `>` are Slack's markup.
"""

from __future__ import annotations

import json
from typing import Any

from extensions.alerts.message import Alert, Digest, Message, clip, iso

HEADER_LIMIT = 150
SECTION_LIMIT = 3000
MAX_BLOCKS = 50
LINE_LIMIT = 300


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _linked(text: str, link: str | None) -> str:
    if not link:
        return escape(text)
    # A link's text cannot hold "|" or ">" even escaped; the URL is ours.
    return f"<{escape(link)}|{escape(text).replace('|', '¦')}>"


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, HEADER_LIMIT)}}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT]}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_LIMIT]}]}


def _alert_blocks(alert: Alert) -> list[dict[str, Any]]:
    blocks = [_header(alert.title)]
    if alert.summary:
        blocks.append(_section(escape(alert.summary)))
    fields = [("Project", alert.project), ("Environment", alert.environment),
              ("Release", alert.release), ("Service", alert.service)]
    shown = [{"type": "mrkdwn", "text": f"*{name}*\n{escape(clip(value, 500))}"}
             for name, value in fields if value]
    if shown:
        blocks.append({"type": "section", "fields": shown})
    seen = [f"{label} {iso(us)}" for label, us in
            (("first seen", alert.first_seen_us), ("last seen", alert.last_seen_us)) if us]
    footer = " · ".join([alert.kind, *seen, f"id {alert.id}"])
    if alert.link:
        footer = f"{_linked('Open in Sounding', alert.link)} · {footer}"
    blocks.append(_context(footer))
    return blocks


def _pack(lines: list[str], max_sections: int) -> tuple[list[str], int]:
    """Lines joined into at most `max_sections` sections; and how many lines fit."""
    sections: list[str] = []
    current: list[str] = []
    size = listed = 0
    for line in lines:
        if current and size + 1 + len(line) > SECTION_LIMIT:
            sections.append("\n".join(current))
            listed += len(current)
            current, size = [], 0
            if len(sections) == max_sections:
                return sections, listed
        size += len(line) + (1 if current else 0)
        current.append(line)
    if current:
        sections.append("\n".join(current))
        listed += len(current)
    return sections, listed


def _digest_blocks(digest: Digest) -> list[dict[str, Any]]:
    lines = [f"• [{escape(clip(alert.project, 80))}] "
             f"{_linked(clip(alert.title, LINE_LIMIT), alert.link)}"
             for alert in digest.alerts]
    # The header and the closing context take two of the blocks.
    sections, listed = _pack(lines, MAX_BLOCKS - 2)
    unlisted = digest.count - listed
    return [_header(f"{digest.count} alerts (digest)"),
            *(_section(text) for text in sections),
            _context(f"and {unlisted} more: see the dashboard" if unlisted
                     else f"digest id {digest.id}")]


def slack_body(message: Message) -> bytes:
    if isinstance(message, Alert):
        text = f"[{message.project}] {message.title}"
        blocks = _alert_blocks(message)
    else:
        text = f"{message.count} alerts (digest): " + "; ".join(
            clip(a.title, 100) for a in message.alerts[:20])
        blocks = _digest_blocks(message)
    return json.dumps({"text": escape(clip(text, 3000)), "blocks": blocks},
                      ensure_ascii=False, separators=(",", ":")).encode()
