"""A trace across two services, with an exception event carrying a stack trace:
what the Trace page's legend, markers and event timeline are tested on."""

from __future__ import annotations

import secrets
import time
from typing import Any

from tests.dashboard.data import attr, span

STACK = ('Traceback (most recent call last):\n  File "app.py", line 3, in charge\n'
         '    raise CardDeclined("no <funds>")\nCardDeclined: no <funds>')


def two_service_trace(front: str = "front", back: str = "back"
                      ) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(trace id, {role: span id}, OTLP/JSON body): front's root > front's call >
    back's handler (failing, with an exception event) > back's query."""
    trace_id = secrets.token_hex(16)
    t0 = time.time_ns() - 30_000_000_000
    root = span(trace_id, "GET /pay", t0, 200, kind=2)
    call = span(trace_id, "POST back/charge", t0 + 10_000_000, 150, root["spanId"], kind=3)
    handler = span(trace_id, "charge", t0 + 20_000_000, 120, call["spanId"], kind=2,
                   error=True)
    handler["events"] = [
        {"name": "retrying", "timeUnixNano": str(t0 + 30_000_000),
         "attributes": [attr("attempt", 2)]},
        {"name": "exception", "timeUnixNano": str(t0 + 90_000_000),
         "attributes": [attr("exception.type", "CardDeclined"),
                        attr("exception.message", "no <funds>"),
                        attr("exception.stacktrace", STACK)]}]
    query = span(trace_id, "SELECT cards", t0 + 40_000_000, 20, handler["spanId"], kind=3,
                 db__system="postgresql")

    def resource(service: str, spans: list[dict[str, Any]]) -> dict[str, Any]:
        return {"resource": {"attributes": [attr("service.name", service),
                                            attr("host.name", f"{service}-1")]},
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": spans}]}

    ids = {"root": root["spanId"], "call": call["spanId"], "handler": handler["spanId"],
           "query": query["spanId"]}
    return trace_id, ids, {"resourceSpans": [resource(front, [root, call]),
                                             resource(back, [handler, query])]}
