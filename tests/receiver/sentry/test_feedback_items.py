"""The feedback and session items of an envelope, decoded (receiver/sentry/items.py,
feedback.py, sessions.py): what each keeps, what is dropped alone and counted, and
that the same item gives the same id or mark (a retry is stored once)."""

from __future__ import annotations

from receiver.sentry.envelope import parse_envelope
from receiver.sentry.items import decode_envelope
from tests.receiver.sentry.envelopes import envelope, item

NOW_US = 1_795_168_800_000_000
EVENT = "ab" * 16


def decode(body: bytes):  # type: ignore[no-untyped-def]
    return decode_envelope(parse_envelope(body), NOW_US, body)


def test_feedback_and_user_reports_keep_what_they_say_and_their_event() -> None:
    body = envelope({}, [
        item("feedback", {"event_id": "cd" * 16, "timestamp": 1_795_168_000.5,
                          "release": "web@3", "environment": "prod",
                          "contexts": {"feedback": {
                              "message": "Pay button does nothing sentry_key=abc123",
                              "name": "Ada", "contact_email": "ada@example.com",
                              "url": "https://shop.example/pay",
                              "associated_event_id": EVENT.upper()}}}),
        item("user_report", {"event_id": EVENT, "name": "Bob", "email": "bob@example.com",
                             "comments": "crashed again"}),
        item("feedback", {"contexts": {"feedback": {"message": "  "}}}),  # no message
        item("user_report", {"event_id": EVENT}),  # no comments
    ])
    decoded = decode(body)
    new, legacy = decoded.feedback
    assert (new.feedback_id, new.ts_us, new.source, new.name, new.email, new.url,
            new.associated_event_id, new.release, new.environment) == (
        "cd" * 16, 1_795_168_000_500_000, "feedback", "Ada", "ada@example.com",
        "https://shop.example/pay", EVENT, "web@3", "prod")
    assert new.message == "Pay button does nothing sentry_key=[Filtered]"
    assert (legacy.source, legacy.name, legacy.email, legacy.message,
            legacy.associated_event_id, legacy.ts_us) == (
        "user_report", "Bob", "bob@example.com", "crashed again", EVENT, NOW_US)
    assert decoded.drops() == {"spans": 0, "sessions": 0, "feedback": 2, "logs": 0,
                               "metrics": 0}
    again = decode(body).feedback
    assert [f.feedback_id for f in again] == [new.feedback_id, legacy.feedback_id]


def test_sessions_items_are_marked_by_their_envelope() -> None:
    aggregate = {"attrs": {"release": "r@1"},
                 "aggregates": [{"started": "2026-11-20T10:00:00Z", "exited": 2}]}
    one = envelope({"sent_at": "2026-11-20T10:01:00.001Z"}, [item("sessions", aggregate)])
    two = envelope({"sent_at": "2026-11-20T10:01:00.002Z"}, [item("sessions", aggregate)])
    (a,), (b,), (c,) = (decode(one).sessions, decode(one).sessions, decode(two).sessions)
    assert a.mark == b.mark != c.mark
    assert (a.release, a.environment, a.started_s, a.started, a.exited) == (
        "r@1", "", 1_795_168_800, 2, 2)
    dropped = decode(envelope({}, [item("session", {"sid": "x"}),
                                   item("sessions", {"aggregates": []})]))
    assert dropped.sessions == [] and dropped.drops()["sessions"] == 2
