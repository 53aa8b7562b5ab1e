"""processors/scrub/unread.py: which spans still in their protobuf message may hold
something to scrub. `suspect_spans` must name exactly the spans `suspects` (the plain
form, still used for log records) names, with the same quick tests passed, whatever
the rules: a span it missed would be stored with its secret."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

from model.otlp_values import fill_key_values
from model.policy import Policy, scrub_settings
from model.records import Batch, Span
from processors.scrub import MASK, Scrubber, scrub_batch
from processors.scrub.unread import suspect_spans, suspects, unread

CARD = "4111 1111 1111 1111"
# (name, attributes, an event's attributes): plain spans and a secret in each place
# the quick tests look, in either case, among spans that look alike.
SPANS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("GET /a", {"http.request.method": "GET", "http.route": "/a"}, {}),
    ("SELECT", {"db.statement": "SELECT * FROM sessions WHERE id = $1"}, {}),
    ("SELECT", {"db.statement": "SELECT * FROM orders WHERE id = $1"}, {}),
    ("session cleanup", {"n": 3}, {}),  # a stem in the name only
    ("GET /b", {"X-API-KEY": "k-123", "http.route": "/b"}, {}),
    ("GET /c", {"upstream": "sent BEARER abcdefgh"}, {}),
    ("pay", {"note": f"paid with {CARD}"}, {}),
    ("pay", {"note": "paid"}, {"exception.message": f"card {CARD} declined"}),
    ("login", {"query": "user=ada&PASSWORD=hunter2"}, {}),
    ("mail", {"to": "ada@example.com", "from.ip": "10.0.0.1"}, {}),
    ("ids", {"order": 4111111111111111, "big": "12345678901234567890"}, {}),
    ("tail 4111 1111", {}, {}),  # a card's first half here,
    ("1111 1111 head", {}, {}),  # its second half in the next span's bytes
    ("user", {"enduser.id": "u-42", "ticket": "ORD-12345"}, {}),
]
POLICIES = {
    "defaults": Policy(hash_key=b"k" * 32),
    "everything": Policy(scrub_settings({"emails": True, "ip_addresses": True}),
                         hash_key=b"k" * 32),
    "no defaults": Policy(scrub_settings({"defaults": False, "emails": True}),
                          hash_key=b"k" * 32),
    "custom": Policy(scrub_settings({"rules": [
        {"keys": ["enduser.id"], "action": "hash"},
        {"pattern": r"ORD-\d{4,}", "action": "mask"}]}), hash_key=b"k" * 32),
}


def spans() -> list[Span]:
    out = []
    for i, (name, attributes, event) in enumerate(SPANS):
        message = trace_pb2.Span(trace_id=bytes(15) + bytes([i + 1]), span_id=bytes(7) + b"\1",
                                 name=name, kind=trace_pb2.Span.SPAN_KIND_CLIENT)
        fill_key_values(message.attributes, attributes)
        if event:
            fill_key_values(message.events.add(name="exception").attributes, event)
        out.append(Span("", "", "", name, 3, 0, 0, 0, "", "shop", "", {}, otlp=message))
    return out


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
def test_suspect_spans_names_what_suspects_names(policy: Policy) -> None:
    scrubber = Scrubber(policy.scrub, policy.hash_key)
    records = spans()
    for batch in (records, records[:1], records[3:4], records[-3:], []):
        plain = suspects(scrubber, unread(batch))
        assert suspect_spans(scrubber, unread(batch)) == plain


def test_the_spans_with_a_secret_are_scrubbed_and_the_others_stay_unread() -> None:
    records = spans()
    scrub_batch(Batch(1, spans=records), POLICIES["defaults"])
    # Named by their bytes, but nothing to scrub: read, found clean, left unread.
    assert [i for i, span in enumerate(records) if span.untouched] == [
        0, 1, 2, 3, 9, 10, 11, 12, 13]
    assert records[4].attributes["X-API-KEY"] == MASK
    assert records[5].attributes["upstream"] == f"sent BEARER {MASK}"
    assert records[6].attributes["note"] == f"paid with {MASK}"
    assert records[7].events[0]["attributes"]["exception.message"] == f"card {MASK} declined"
    assert records[8].attributes["query"] == f"user=ada&PASSWORD={MASK}"
