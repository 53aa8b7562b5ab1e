"""A real application on sentry-sdk 3 (span streaming, its only tracing mode), run as a
subprocess by tests/receiver/sentry/test_span_stream.py so that nothing of the SDK
leaks into the test process. Usage: `python sdk3_app.py`, with SENTRY_DSN set; it
needs sentry-sdk 3 (tests/receiver/sentry/sdk3.py names the interpreter).

It serves one request the way a web framework's integration would: a segment
"GET /items/{id}" (an http.server span named by its route) with attributes of every
type the span stream has and a link to the trace before it; under it a database query
and a call that fails (status "error"). It flushes and prints one JSON object on
stdout: the SDK's version, the ids it sent (`trace_id`, `segment`, `query`,
`failed`), the link it sent, and what the SDK logged at warning or above.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import sentry_sdk

# The trace a page load before this one made: what `links` points at.
PREVIOUS = {"trace_id": "627a2885119dcc8184fae7eef09438cb", "span_id": "6c71fc6b09b8b716"}


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


def lookup_price(item_id: int) -> None:
    raise LookupError(f"no price for item {item_id}")


def serve() -> dict[str, Any]:
    link = {**PREVIOUS, "sampled": True, "attributes": {"sentry.link.type": "previous_trace"}}
    with sentry_sdk.start_span(name="GET /items/{id}", links=[link], attributes={
            "sentry.op": "http.server", "sentry.segment.name.source": "route",
            "http.request.method": "GET", "http.response.status_code": 200,
            "item.id": 42, "item.price": 9.5, "item.in_stock": True,
            "item.tags": ["new", "sale"], "item.sizes": [38, 40],
            "item.weights": [0.5, 1.25], "item.flags": [True, False],
            # Beyond 64 bits: still `integer` on the wire.
            "item.serial": 2**70}) as segment:
        with sentry_sdk.start_span(name="SELECT * FROM items WHERE id = %s", attributes={
                "sentry.op": "db", "db.system.name": "postgresql"}) as query:
            pass
        try:
            with sentry_sdk.start_span(name="lookup_price",
                                       attributes={"sentry.op": "function"}) as failed:
                lookup_price(42)
        except LookupError:
            pass
    return {"trace_id": segment.trace_id, "segment": segment.span_id,
            "query": query.span_id, "failed": failed.span_id, "link": link}


def main() -> None:
    collect = Collect()
    logging.getLogger("sentry_sdk.errors").addHandler(collect)
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], release="shop@3.0", environment="test",
                    traces_sample_rate=1.0, default_integrations=False,
                    _experiments={"transport_compression_level": 0})
    sentry_sdk.set_attribute("service", "shop-py")
    sent = serve()
    sentry_sdk.flush(timeout=20)
    print(json.dumps({"sdk": sentry_sdk.VERSION, **sent, "log": collect.lines}))
    sentry_sdk.get_client().close(timeout=5)


if __name__ == "__main__":
    main()
