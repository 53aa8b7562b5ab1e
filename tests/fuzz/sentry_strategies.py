"""Hypothesis strategies for the Sentry door: events and transactions as the real
Python sentry-sdk sends them (recorded once per run by running it), mutated; whole
envelopes framed right and wrong; the ways an SDK (or anyone) authenticates; and the
hostile marker that must never reach a page unescaped.

An envelope is drawn as its parts (`Envelope`) and written by `Envelope.render`,
because the DSN in its header names the server, which the test only knows then.
"""

from __future__ import annotations

import json
import random
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.fuzz import strategies as s
from tests.fuzz.strategies import Raw, uniform, weighted
from tests.support import clients

SENTRY_TESTS = Path(__file__).parent.parent / "receiver" / "sentry"

# A browser SDK's event (@sentry/browser's shape: JavaScript frames with columns, the
# page's request, its browser and os contexts, breadcrumbs as {"values": [...]}).
BROWSER_EVENT: dict[str, Any] = {
    "event_id": "f0e1d2c3b4a5968778695a4b3c2d1e0f", "platform": "javascript",
    "level": "error", "timestamp": 1795168800.25, "release": "shop-web@3.2.1",
    "environment": "staging",
    "exception": {"values": [{"type": "TypeError",
                              "value": "Cannot read properties of undefined (reading 'id')",
                              "mechanism": {"type": "onerror", "handled": False},
                              "stacktrace": {"frames": [
                                  {"filename": "https://shop.example/static/app.js",
                                   "function": "checkout", "lineno": 120, "colno": 17,
                                   "in_app": True, "context_line": "  return cart.user.id;",
                                   "pre_context": ["function checkout(cart) {"],
                                   "post_context": ["}"]}]}}]},
    "request": {"url": "https://shop.example/cart?sentry_key=abc",
                "headers": {"User-Agent": "Mozilla/5.0 Firefox/128.0",
                            "Cookie": "session=secret"}},
    "contexts": {"browser": {"name": "Firefox", "version": "128.0"},
                 "os": {"name": "Linux"},
                 "trace": {"trace_id": "5b8efff798038103d269b633813fc60c",
                           "span_id": "eee19b7ec3c1b174"}},
    "tags": {"page": "cart", "ab": "b"}, "user": {"email": "ada@example.com"},
    "breadcrumbs": {"values": [{"category": "ui.click", "message": "button#pay",
                                "timestamp": 1795168799.5}]},
    "sdk": {"name": "sentry.javascript.browser", "version": "8.0.0"},
}

# A `span` item as @sentry/node streams them (version 2, typed attributes).
STREAMED_SPANS: dict[str, Any] = {"version": 2, "items": [
    {"trace_id": "0dd060f612b443d6965699bf3eb0f140", "span_id": "b77978d262657e0c",
     "name": "GET /orders/:id", "status": "ok", "is_segment": True,
     "start_timestamp": 1795168800.0, "end_timestamp": 1795168800.12,
     "attributes": {"sentry.op": {"type": "string", "value": "http.server"},
                    "sentry.release": {"type": "string", "value": "shop@1.0"},
                    "http.response.status_code": {"type": "integer", "value": 200}}},
    {"trace_id": "0dd060f612b443d6965699bf3eb0f140", "span_id": "96986480ca42ab04",
     "parent_span_id": "b77978d262657e0c", "name": "SELECT 1", "status": "error",
     "is_segment": False, "start_timestamp": 1795168800.01,
     "end_timestamp": 1795168800.02,
     "attributes": {"sentry.op": {"type": "string", "value": "db.query"}}}]}


@cache
def sdk_payloads() -> dict[str, list[dict[str, Any]]]:
    """What the real Python sentry-sdk sends: its events (a chained exception, a
    message, a logged error, an exception with a fingerprint) and its transactions
    (two requests through its Tornado integration), recorded by its transport."""
    def run(script: str) -> Any:
        done = subprocess.run([clients.python(clients.SENTRY_SDK_2), str(SENTRY_TESTS / script)],
                              capture_output=True, text=True, check=True, timeout=60)
        return json.loads(done.stdout)

    events = run("sentry_sdk_client.py")["events"]
    for event in events:
        # Every installed package: hundreds of places for a mutation to land on that
        # the door only leaves out.
        event.pop("modules", None)
    transactions = [payload for kind, payload in run("sentry_sdk_txn_client.py")
                    if kind == "transaction"]
    return {"events": [*events, BROWSER_EVENT], "transactions": transactions}


def _seeds(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.deferred(lambda: st.sampled_from(sdk_payloads()[kind]))


def events() -> st.SearchStrategy[s.Mutated]:
    """A real SDK event with a few structure-aware mutations."""
    return _seeds("events").flatmap(lambda event: s.mutations(event, 4))


def transactions() -> st.SearchStrategy[s.Mutated]:
    return _seeds("transactions").flatmap(lambda txn: s.mutations(txn, 4))


def streamed_spans() -> st.SearchStrategy[s.Mutated]:
    return s.mutations(STREAMED_SPANS, 3)


# --- hostile strings ---------------------------------------------------------------

def hostile(marker: str) -> str:
    """Client text that is markup if a page writes it unescaped."""
    return f"<script>\"'{marker}</script>"


def raw_markup(page: str, marker: str) -> bool:
    """Whether `page` holds the hostile text unescaped: escaped, no quote (so no tag
    either) comes right before the marker."""
    return f"'{marker}" in page


# Numbers a JSON parser reads, and a store or a page may not take: 1e400 is read as
# infinity, the integers are past 64 bits.
ODD_NUMBERS: list[Any] = [Raw(b"1e400", refusable=True), Raw(b"-1e400", refusable=True),
                          Raw(b"1e-400"), 2**64, -(2**63) - 1, 10**30, -0.0, 5e-324]


def plant(tree: Any, marker: str, rnd: random.Random, share: float = 0.3) -> Any:
    """`tree` with about `share` of its strings (values and keys) replaced by hostile
    text, and some of its other scalars by odd numbers; the exception's type and
    value, the message, environment, release, tags and user always."""
    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return value[:12] + hostile(marker) if rnd.random() < share else value
        if value is None or isinstance(value, int | float):
            return rnd.choice(ODD_NUMBERS) if rnd.random() < share / 2 else value
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {(k[:12] + hostile(marker) if rnd.random() < share / 3 else k): walk(v)
                    for k, v in value.items()}
        return value

    planted = walk(tree)
    if isinstance(planted, dict):
        always = hostile(marker)
        for name in ("environment", "release", "message", "server_name", "transaction"):
            if name in planted or name in ("environment", "release"):
                planted[name] = always
        planted["tags"] = {**(planted["tags"] if isinstance(planted.get("tags"), dict)
                              else {}), always: always}
        planted["user"] = {"id": always, "email": always, "n": rnd.choice(ODD_NUMBERS)}
        chain = planted.get("exception")
        values = chain.get("values") if isinstance(chain, dict) else None
        for exc in values if isinstance(values, list) else []:
            if isinstance(exc, dict):
                exc["type"], exc["value"] = always, always
    return planted


# --- envelopes ----------------------------------------------------------------------

ITEM_TYPES = ["event", "event", "event", "transaction", "transaction", "span", "session",
              "sessions", "client_report", "attachment", "replay_recording", "check_in",
              "profile", "a_type_from_the_future"]
ODD_TYPES: list[Any] = ["", " ", "EVENT", "event\x00", 7, None, ["event"], {"t": 1}, True]
HUGE_LENGTHS: list[Any] = [2**31, 2**32 + 1, 2**63 - 1, 2**63, 2**64, 10**30, 10**400]
ODD_LENGTHS: list[Any] = [-1, -(2**63), "3", "0", 1.5, 0.0, True, False, [], {},
                          Raw(b"NaN"), Raw(b"1e400"), Raw(b"-0"), Raw(b"1E2")]


@dataclass
class Envelope:
    """An envelope's parts: its header (an object, else any JSON or bytes), item
    lines as they are written, and the line ending."""

    header: Any
    items: list[tuple[bytes, bytes]] = field(default_factory=list)
    newline: bytes = b"\n"
    trailing: bool = True

    def render(self, dsn: str | None = None) -> bytes:
        header = self.header
        if dsn is not None and isinstance(header, dict):
            header = {**header, "dsn": dsn}
        lines = [header if isinstance(header, bytes) else s.dumps(header)]
        for item_header, payload in self.items:
            lines += [item_header, payload]
        body = self.newline.join(lines)
        return body + self.newline if self.trailing else body

    def __repr__(self) -> str:
        text = self.render()
        return f"Envelope({text[:3000]!r}{'...' if len(text) > 3000 else ''})"


@st.composite
def payloads(draw: st.DrawFn, kind: Any) -> bytes:
    """An item's payload: the kind's real shape mutated, mostly; anything, sometimes."""
    if draw(st.integers(0, 5)) == 0:
        return draw(uniform(s.random_bodies(), st.sampled_from(
            [b"", b"\n", b"null", b"[]", b"{}", b'{"a":1}\n{"b":2}', b"\r\n"])))
    if kind == "event":
        return s.dumps(draw(events()).body)
    if kind == "transaction":
        return s.dumps(draw(transactions()).body)
    if kind == "span":
        return s.dumps(draw(streamed_spans()).body)
    return draw(uniform(st.binary(max_size=64), st.just(b'{"sid":"a","status":"ok"}'),
                        st.dictionaries(s.odd_text(), s.odd_values(), max_size=3).map(s.dumps)))


@st.composite
def items(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """One item's header line and payload, its `length` right, wrong, missing, huge or
    not a number."""
    kind = draw(weighted((8, st.sampled_from(ITEM_TYPES)), (1, st.sampled_from(ODD_TYPES))))
    payload = draw(payloads(kind))
    headers: dict[str, Any] = {"type": kind}
    if draw(st.integers(0, 3)) == 0:
        headers[draw(st.sampled_from(["content_type", "filename", "attachment_type",
                                      "item_count", "length_", ""]))] = draw(s.odd_values())
    how = draw(st.sampled_from(["right"] * 4 + ["missing", "missing", "wrong", "huge", "odd"]))
    if how == "right":
        headers["length"] = len(payload)
    elif how == "wrong":
        headers["length"] = max(len(payload) + draw(st.sampled_from([-3, -1, 1, 2, 50])), 0)
    elif how == "huge":
        headers["length"] = draw(st.sampled_from(HUGE_LENGTHS))
    elif how == "odd":
        headers["length"] = draw(st.sampled_from(ODD_LENGTHS))
    return s.dumps(headers), payload


def envelope_headers() -> st.SearchStrategy[Any]:
    ids = uniform(st.uuids().map(lambda u: u.hex), st.uuids().map(str), s.odd_strings(),
                  s.odd_values())
    return weighted(
        (6, st.fixed_dictionaries({}, optional={
            "event_id": ids, "sent_at": st.sampled_from(s.EDGE_TIMES),
            "sdk": st.just({"name": "sentry.python", "version": "2.0.0"}),
            "trace": st.just({"trace_id": "0dd060f612b443d6965699bf3eb0f140",
                              "public_key": "x"})})),
        (1, s.odd_values()),
        (1, st.sampled_from([b"", b"{", b"\xff\xfe", b"{}" * 40_000, b"[" * 5000,
                             b'{"dsn": "http://[::1@x/1"}', b"\r"])))


@st.composite
def envelopes(draw: st.DrawFn) -> Envelope:
    return Envelope(draw(envelope_headers()), draw(st.lists(items(), max_size=4)),
                    draw(st.sampled_from([b"\n", b"\n", b"\r\n"])), draw(st.booleans()))


# --- authentication -------------------------------------------------------------------

# The forms an SDK uses with the right key, and what may come instead.
GOOD_AUTH = ("x-sentry-auth", "authorization", "query")
AUTH_FORMS = [*GOOD_AUTH, "dsn", "none", "unknown", "other-project", "odd-header",
              "odd-dsn", "bearer"]
ODD_AUTH_HEADERS = [
    "Sentry", "Sentry ", "sentry sentry_key=", "Sentry sentry_key", "Sentry ,,,,",
    "Sentry sentry_version=7", "Sentry sentry_key=,sentry_key={key}", "sentry_key={key}",
    "SENTRY   sentry_key = {key} ,sentry_version=7", "Sentry sentry_key={key}" + ", x=y" * 500,
    "Sentry sentry_key=" + "k" * 5000, "Sentry sentry_key=caf\xe9", "Basic {key}",
    "Sentry sentry_key=\t{key}", "Sentry =, ==, sentry_key==={key}"]
ODD_DSNS: list[Any] = ["", "http://", "http://@x/1", "http://[::1@x/1", "http://{key}@[/1",
                       "{key}", "http://{key}:secret@host/1", "http:///{key}@", 7, None,
                       ["http://{key}@x/1"], {"dsn": "x"}, "http://" + "k" * 5000 + "@x/1",
                       "http://\udcff@x/1", "ftp://{key}@x/1"]
