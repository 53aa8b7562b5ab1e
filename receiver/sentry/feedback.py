"""User feedback from Sentry's SDKs, read into model.records.Feedback.

- `feedback`: the current user-feedback API and widget (`sentry_sdk.capture_feedback`,
  `Sentry.captureFeedback`): an event whose `contexts.feedback` holds `message`,
  `contact_email`, `name`, `associated_event_id` and `url`. Its own `event_id`
  names it, so a retried envelope stores it once.
- `user_report`: the legacy form (`capture_user_feedback`, the old crash-report
  dialog): `event_id` (the event it is about), `name`, `email`, `comments`. It has
  no id of its own: it is named by a hash of what it says and of its event.

Texts are kept as sent, cut at their limits (every page escapes them) and scrubbed
of DSN keys like the rest of an event (receiver/sentry/bounded.py). A feedback item
without a message adds nothing (counted as dropped by the door, never refused).
"""

from __future__ import annotations

from typing import Any

from model.records import Feedback
from receiver.sentry.bounded import scrub
from receiver.sentry.sessions import mark
from receiver.sentry.values import MAX_LABEL, hex_id, text, time_us

MAX_MESSAGE = 4096  # the feedback API's own limit on a message
MAX_URL = 2048


def _text(value: Any, limit: int) -> str | None:
    found = text(value, limit)
    return None if found is None else scrub(found)


def decode_feedback(event: dict[str, Any], now_us: int) -> Feedback | None:
    contexts = event.get("contexts")
    said = contexts.get("feedback") if isinstance(contexts, dict) else None
    if not isinstance(said, dict):
        return None
    message = _text(said.get("message"), MAX_MESSAGE)
    if message is None or not message.strip():
        return None
    feedback_id = hex_id(event.get("event_id"), 32) or mark(
        "feedback", message, str(said.get("associated_event_id"))).hex()
    return Feedback(
        feedback_id=feedback_id, ts_us=time_us(event.get("timestamp")) or now_us,
        message=message, source="feedback", name=_text(said.get("name"), MAX_LABEL),
        email=_text(said.get("contact_email"), MAX_LABEL),
        associated_event_id=hex_id(said.get("associated_event_id"), 32),
        url=_text(said.get("url"), MAX_URL),
        release=text(event.get("release"), MAX_LABEL),
        environment=text(event.get("environment"), MAX_LABEL))


def decode_user_report(report: dict[str, Any], now_us: int) -> Feedback | None:
    comments = _text(report.get("comments"), MAX_MESSAGE)
    if comments is None or not comments.strip():
        return None
    event_id = hex_id(report.get("event_id"), 32)
    name, email = _text(report.get("name"), MAX_LABEL), _text(report.get("email"), MAX_LABEL)
    feedback_id = mark("user_report", str(event_id), name or "", email or "",
                       comments).hex()
    return Feedback(feedback_id=feedback_id, ts_us=now_us, message=comments,
                    source="user_report", name=name, email=email,
                    associated_event_id=event_id)
