"""@sentry/node from npm (tests/js/send_sentry.js), unchanged but for its DSN: an
exception and a transaction. First against a listener that records what it sends
(what the SDK's wire is, and that the transaction decoder reads it), then against
Sounding's Sentry door."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from receiver.sentry.span_attributes import CLIENT, SERVER
from receiver.sentry.transaction import decode_transaction
from tests.receiver.sentry.helpers import dsn, start_sentry
from tests.support import clients
from tests.support.recorder import Recorded, recording
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_JAVASCRIPT)

JS_DIR = clients.js_dir()
PUBLIC_KEY = "0123456789abcdef0123456789abcdef"
NOW_US = 1_795_168_800_000_000


def run_node(dsn: str, *args: str) -> dict[str, Any]:
    """Runs send_sentry.js; its stdout (the event id and trace id it sent)."""
    if shutil.which("node") is None:
        pytest.fail("node is required: `make test-deps` installs the JavaScript client")
    if not (JS_DIR / "node_modules" / "@sentry" / "node").is_dir():
        pytest.fail("@sentry/node is missing: run `make test-deps`")
    done = subprocess.run(["node", str(JS_DIR / "send_sentry.js"), dsn, *args],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def envelope_items(body: bytes) -> list[tuple[dict[str, Any], Any]]:
    """(item header, payload) of an envelope: a header line, then per item a header
    line and a payload of `length` bytes or up to the next newline."""
    _, _, rest = body.partition(b"\n")
    items = []
    while rest.strip():
        header_line, _, rest = rest.partition(b"\n")
        header = json.loads(header_line)
        if "length" in header:
            payload, rest = rest[:header["length"]], rest[header["length"] + 1:]
        else:
            payload, _, rest = rest.partition(b"\n")
        items.append((header, json.loads(payload)))
    return items


def sent_items(requests: list[Recorded]) -> dict[str, list[Any]]:
    by_type: dict[str, list[Any]] = {}
    for request in requests:
        for header, payload in envelope_items(request.body):
            by_type.setdefault(header["type"], []).append(payload)
    return by_type


def test_send_sentry_js_sends_an_exception_and_a_transaction_the_decoder_reads() -> None:
    with recording() as recorder:
        ids = run_node(recorder.url.replace("http://", f"http://{PUBLIC_KEY}@") + "/7")
    assert {r.path.split("?")[0] for r in recorder.requests} == {"/api/7/envelope/"}
    assert all(f"sentry_key={PUBLIC_KEY}" in r.path for r in recorder.requests)
    items = sent_items(recorder.requests)

    [event] = items["event"]
    assert event["event_id"] == ids["event_id"]
    [exception] = event["exception"]["values"]
    assert (exception["type"], exception["value"]) == ("TypeError",
                                                       "card declined for order 42")
    innermost = exception["stacktrace"]["frames"][-1]
    assert (innermost["function"], innermost["in_app"]) == ("chargeCard", True)

    [transaction] = items["transaction"]
    decoded = decode_transaction(transaction, NOW_US)
    assert decoded.dropped == 0, decoded.reasons
    root, child = decoded.spans
    assert (root.trace_id, root.name, root.kind) == (ids["trace_id"], "GET /orders/:id",
                                                     SERVER)
    assert (child.parent_span_id, child.kind) == (root.span_id, CLIENT)
    assert child.name == "SELECT * FROM orders WHERE id = $1"
    assert child.attributes["db.system"] == "postgresql"
    assert root.service_name == "checkout-node"
    assert root.resource_attributes["service.version"] == "shop-node@4.5.6"


def test_send_sentry_js_streams_spans_when_asked() -> None:
    """@sentry/node 11's default: spans as `span` items (span v2), no transaction."""
    with recording() as recorder:
        ids = run_node(recorder.url.replace("http://", f"http://{PUBLIC_KEY}@") + "/7",
                       "--stream")
    items = sent_items(recorder.requests)
    assert "transaction" not in items
    spans = [span for payload in items["span"] for span in payload["items"]]
    assert {span["trace_id"] for span in spans} == {ids["trace_id"]}
    assert {span["name"] for span in spans} == {"GET /orders/:id",
                                                 "SELECT * FROM orders WHERE id = $1"}


@pytest.mark.parametrize("mode", ["transaction", "stream"])
def test_sentry_node_exception_and_spans_reach_sounding(start: Callable[..., Server],
                                                        db_url: str, mode: str) -> None:
    """Only the DSN changed: the exception becomes a group, and the spans a trace,
    whether the SDK sends a transaction or streams its spans (its default)."""
    server = start_sentry(start, db_url)
    ids = run_node(dsn(server), *(["--stream"] if mode == "stream" else []))
    spans = server.query("SELECT name, kind, service_name FROM spans WHERE trace_id = :t",
                         t=bytes.fromhex(ids["trace_id"]))
    assert sorted(spans) == [("GET /orders/:id", SERVER, "checkout-node"),
                             ("SELECT * FROM orders WHERE id = $1", CLIENT, "checkout-node")]
    groups = server.query("SELECT exception_class, message FROM error_groups")
    assert groups == [("TypeError", "card declined for order 42")]
