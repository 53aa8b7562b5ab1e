"""A real application using the Sentry Python SDK, run as a subprocess by the tests
so that nothing of the SDK (its global client, its logging hooks) leaks into the
test process. Usage: `python sdk_app.py <scenario>`, with SENTRY_DSN set and
SDK_COMPRESSION (gzip, br or none) choosing the transport's compression.

Scenarios: `sessions` (an envelope of a session, a client report and an attachment
through the SDK's own transport), `message`, `exception`, `message_twice` (the
same event sent twice), and those of sdk_scenarios.py (an application's errors,
messages and transactions, as the end-to-end tests send them). On stdout, one JSON
object: the event ids captured, what the SDK logged about the transport, what its
rate limiter recorded, and what the scenario reports about itself (`info`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from typing import Any

import sdk_scenarios
import sentry_sdk
from sentry_sdk.envelope import Envelope, Item, PayloadRef


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


def charge_order(order_id: int) -> None:
    raise ValueError(f"order {order_id} cannot be charged")


def run(scenario: str) -> list[str | None]:
    if scenario in sdk_scenarios.SCENARIOS:
        return sdk_scenarios.SCENARIOS[scenario]()
    if scenario == "sessions":
        envelope = Envelope(headers={"sent_at": datetime.now(UTC).isoformat()})
        envelope.add_session({"sid": "4a3c3c2e1b5f4d7a8c9e0f1a2b3c4d5e", "status": "ok",
                              "errors": 0, "started": "2024-05-01T10:00:00Z",
                              "attrs": {"release": "shop@1.0"}})
        envelope.add_item(Item(PayloadRef(json={"timestamp": 1714557600,
                                                "discarded_events": []}),
                               type="client_report"))
        envelope.add_item(Item(b"line one\nline two\n" * 100, type="attachment",
                               filename="notes.txt"))
        client = sentry_sdk.get_client()
        assert client.transport is not None
        client.transport.capture_envelope(envelope)
        return []
    if scenario == "message":
        return [sentry_sdk.capture_message("the nightly import found 3 bad rows")]
    if scenario == "exception":
        try:
            charge_order(42)
        except ValueError:
            return [sentry_sdk.capture_exception()]
    if scenario == "message_twice":
        event = {"event_id": "5f1b3c2e1d4a4b6c8e9f0a1b2c3d4e5f", "message": "sent twice",
                 "level": "error"}
        return [sentry_sdk.capture_event(dict(event)), sentry_sdk.capture_event(dict(event))]
    raise SystemExit(f"unknown scenario {scenario!r}")


def main() -> None:
    collect = Collect()
    sdk_log = logging.getLogger("sentry_sdk.errors")
    sdk_log.addHandler(collect)
    sdk_log.setLevel(logging.DEBUG)
    compression = os.environ.get("SDK_COMPRESSION", "none")
    experiments: dict[str, Any] = {"transport_compression_level": 0} \
        if compression == "none" else {"transport_compression_algo": compression}
    # debug: the SDK logs what the collector answered only then (its logger's filter).
    # Every transaction sampled (scenarios without one send none); the integrations a
    # scenario needs (logging) and nothing else.
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], release="shop@1.0", environment="test",
                    default_integrations=False, debug=True, _experiments=experiments,
                    traces_sample_rate=1.0,
                    integrations=sdk_scenarios.INTEGRATIONS.get(sys.argv[1], list)())
    ids = run(sys.argv[1])
    sentry_sdk.flush(timeout=20)
    client = sentry_sdk.get_client()
    transport: Any = client.transport
    disabled = {str(category): until.isoformat()
                for category, until in getattr(transport, "_disabled_until", {}).items()}
    print(json.dumps({"ids": ids, "log": collect.lines, "disabled_until": disabled,
                      "info": sdk_scenarios.INFO,
                      # Level 0 sends the body as it is, whatever the algorithm.
                      "compression": getattr(transport, "_compression_algo", None)
                      if getattr(transport, "_compression_level", 0) else None}))
    sentry_sdk.get_client().close(timeout=5)


if __name__ == "__main__":
    main()
