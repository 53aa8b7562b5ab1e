"""The real Sentry Python SDK, only its DSN pointed at Sounding: an exception and
messages become groups and events, read back from the store and the read API, on
SQLite and PostgreSQL (issue 12, "Real clients in the tests")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.receiver.sentry.e2e import group_of, send, start_with_api
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

APP = Path(__file__).with_name("sdk_scenarios.py")
SOURCE = APP.read_text().splitlines()


def line_of(code: str) -> int:
    """The line number of the one line of sdk_scenarios.py that holds `code`."""
    [number] = [n for n, line in enumerate(SOURCE, 1) if code in line]
    return number


def frame(function: str, code: str) -> dict[str, Any]:
    """What a stored frame of sdk_scenarios.py holds, its source context included."""
    lineno = line_of(code)
    return {"filename": APP.name, "abs_path": str(APP), "module": APP.stem,
            "function": function, "lineno": lineno, "in_app": True,
            "context_line": SOURCE[lineno - 1], "pre_context": SOURCE[lineno - 6:lineno - 1],
            "post_context": SOURCE[lineno:lineno + 5]}


@pytest.fixture
def api_server(start: Callable[..., Server], db_url: str) -> Server:
    return start_with_api(start, db_url)


def test_capture_exception_becomes_a_group_with_frames_context_and_labels(
        api_server: Server) -> None:
    [event_id] = send(api_server, "checkout")["ids"]
    groups = api_server.query("SELECT fingerprint, exception_class, message, count "
                              "FROM error_groups")
    [(fingerprint, *group)] = groups
    assert group == ["RuntimeError", "checkout of order 42 failed", 1]
    [key] = api_server.query("SELECT occurrence_key FROM error_events")
    assert key == (event_id,)

    page = group_of(api_server, fingerprint)
    event = page["event"]
    # The chain in order, root cause first, each with its in-app frames outermost first.
    assert [(e["type"], e["value"]) for e in event["exceptions"]] == [
        ("ValueError", "card of order 42 declined"),
        ("RuntimeError", "checkout of order 42 failed")]
    cause, raised = event["exceptions"]
    assert cause["frames"] == [frame("checkout", "        charge(order_id)"),
                               frame("charge", "raise ValueError(")]
    assert raised["frames"] == [frame("checkout_app", "        checkout(42)"),
                                frame("checkout", "raise RuntimeError(")]
    assert raised["mechanism"] == {"type": "generic", "handled": True}
    innermost = frame("checkout", "raise RuntimeError(")
    assert event["source_context"] == {
        "file": str(APP), "lineno": innermost["lineno"],
        "context_line": innermost["context_line"],
        "pre_context": innermost["pre_context"], "post_context": innermost["post_context"]}
    assert event["backtrace"][0] == \
        f'File "{APP}", line {innermost["lineno"]}, in checkout'

    assert (event["level"], event["environment"], event["release"]) == \
        ("error", "test", "shop@1.0")
    assert event["user_id"] == "user-42"
    tags = event["tags"]
    assert tags["region"] == "eu-west"  # the application's own
    assert (tags["browser"], tags["transaction"], tags["mechanism"], tags["handled"]) == \
        ("Chrome 126", "generic WSGI request", "generic", "yes")  # derived
    assert tags["server_name"]
    context = event["context"]
    assert context["user"] == {"id": "user-42", "email": "ada@example.com"}
    assert (context["request"]["method"], context["request"]["url"],
            context["request"]["query_string"]) == ("POST", "http://shop.example/checkout",
                                                    "order=42")
    assert [(c["category"], c["message"]) for c in context["breadcrumbs"]] == \
        [("cart", "added sku-7")]
    assert context["contexts"]["trace"]["trace_id"] == event["trace_id"]

    facets = {f["name"]: {v["value"]: v["count"] for v in f["values"]}
              for f in page["facets"]}
    assert facets["environment"] == {"test": 1}
    assert facets["release"] == {"shop@1.0": 1}
    assert facets["level"] == {"error": 1}
    assert facets["browser"] == {"Chrome 126": 1}
    assert page["first_release"] == "shop@1.0"


def test_capture_message_and_logged_errors_group_by_their_template(
        api_server: Server) -> None:
    send(api_server, "messages")
    groups = {row.message: row for row in api_server.query(
        "SELECT fingerprint, exception_class, message, count FROM error_groups")}
    warning = groups["disk almost full"]
    assert (warning.exception_class, warning.count) == ("Message", 1)
    event = group_of(api_server, warning.fingerprint)["event"]
    assert (event["level"], event["message"]) == ("warning", "disk almost full")

    # Two logged errors of one template, with different parameters: one group of two.
    [logged] = [row for message, row in groups.items() if message.startswith("payment ")]
    assert (logged.exception_class, logged.count) == ("Message", 2)
    assert len(groups) == 2
    page = group_of(api_server, logged.fingerprint)
    event = page["event"]
    assert event["level"] == "error"
    assert event["message"] in ("payment p-7 declined", "payment p-9 declined")
    assert event["context"]["logentry"]["message"] == "payment %s declined"
    assert event["context"]["logentry"]["params"] in (["p-7"], ["p-9"])
    messages = api_server.query("SELECT message FROM error_events WHERE fingerprint = :f "
                                "ORDER BY message", f=logged.fingerprint)
    assert messages == [("payment p-7 declined",), ("payment p-9 declined",)]
