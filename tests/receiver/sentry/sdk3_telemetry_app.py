"""A real application using sentry-sdk 3 (3.0.1), run as a subprocess by
test_sdk_telemetry.py so that nothing of the SDK leaks into the test process. With
SENTRY_DSN set, it does what an app's request handler does inside one span: logs
through `sentry_sdk.logger` (a template with a parameter) and through `logging`
(LoggingIntegration, at INFO and above, as the SDK's setup guide enables logs in 3.x:
there is no `enable_logs` option), counts, gauges and times with
`sentry_sdk.metrics`, and captures the error it raises. It flushes, and prints one
JSON object on stdout: the trace id, the span id and the error's event id.

Written for sentry-sdk 3.x: sdk_app.py and its scenarios are 2.x's (transactions).
"""

from __future__ import annotations

import json
import logging
import os

import sentry_sdk
from sentry_sdk.integrations.logging import LoggingIntegration


def charge(order: int) -> None:
    raise ValueError(f"card declined for order {order}")


def main() -> None:
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], traces_sample_rate=1.0,
                    release="shop@3.0.0", environment="staging",
                    integrations=[LoggingIntegration(level=logging.INFO)])
    log = logging.getLogger("shop.checkout")
    with sentry_sdk.start_span(name="POST /checkout") as span:
        sentry_sdk.logger.info("order {order} shipped", order=42)
        log.warning("stock low for %s", "sku-1")
        sentry_sdk.metrics.count("orders.shipped", 1, attributes={"region": "eu"})
        sentry_sdk.metrics.gauge("queue.depth", 7, unit="item")
        sentry_sdk.metrics.distribution("checkout.duration", 187.5, unit="millisecond")
        try:
            charge(42)
        except ValueError:
            event_id = sentry_sdk.capture_exception()
        trace_id, span_id = span.trace_id, span.span_id
    sentry_sdk.flush(timeout=10)
    print(json.dumps({"trace_id": trace_id, "span_id": span_id, "event_id": event_id}))


if __name__ == "__main__":
    main()
