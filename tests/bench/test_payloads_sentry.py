"""The Sentry door's payload (bench/payloads_sentry.py) is what it claims, read by
Sounding's own envelope parser: one event item of about 10 KB with 10 frames, each
with source context, breadcrumbs, contexts and the request; and an event id of its own
per request, so that no request is taken for the retry of another."""

from __future__ import annotations

import json

from bench.payloads_sentry import BREADCRUMBS, FRAMES, sentry_event
from receiver.sentry.envelope import parse_envelope


def test_one_event_of_about_10_kb_with_10_frames() -> None:
    body = sentry_event().render(7)
    assert 9_000 <= len(body) <= 11_500
    envelope = parse_envelope(body)
    assert [item.type for item in envelope.items] == ["event"]
    event = json.loads(envelope.items[0].payload)
    frames = event["exception"]["values"][0]["stacktrace"]["frames"]
    assert len(frames) == FRAMES == 10
    assert all(len(f["pre_context"]) == len(f["post_context"]) == 5 and f["context_line"]
               for f in frames)
    assert len(event["breadcrumbs"]["values"]) == BREADCRUMBS == 10
    assert {"trace", "runtime", "os"} <= event["contexts"].keys()
    assert event["request"]["url"].startswith("https://")
    assert envelope.headers["event_id"] == event["event_id"]
    assert envelope.headers["trace"]["trace_id"] == event["contexts"]["trace"]["trace_id"]


def test_every_request_has_its_own_event_id() -> None:
    envelopes = sentry_event()
    ids = {parse_envelope(envelopes.render(n)).headers["event_id"] for n in range(50)}
    assert len(ids) == 50
