"""sdk3_telemetry_app.py's request on sentry-sdk 2.x (its last releases), through 2.x's
own public API, run as a subprocess by test_sdk_telemetry.py in the sentry-sdk 2
environment (tests/support/clients.py): logs are on with `enable_logs=True` (what 3.x
always does), `logging` reaches them through LoggingIntegration's `sentry_logs_level`,
metrics go through `sentry_sdk.metrics`, and the request is a transaction (2.x's
tracing; 3.x streams spans instead). It flushes, and prints one JSON object on stdout:
the trace id, the transaction's span id and the error's event id.
"""

from __future__ import annotations

import json
import logging
import os

import sentry_sdk
from sentry_sdk import logger as sentry_logger
from sentry_sdk.integrations.logging import LoggingIntegration


def charge(order: int) -> None:
    raise ValueError(f"card declined for order {order}")


def main() -> None:
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], traces_sample_rate=1.0,
                    release="shop@2.0.0", environment="staging", enable_logs=True,
                    integrations=[LoggingIntegration(sentry_logs_level=logging.INFO)])
    log = logging.getLogger("shop.checkout")
    with sentry_sdk.start_transaction(name="POST /checkout", op="http.server") as span:
        sentry_logger.info("order {order} shipped", order=42)
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
    print(json.dumps({"trace_id": trace_id, "span_id": span_id, "event_id": event_id,
                      "sdk": sentry_sdk.VERSION}))


if __name__ == "__main__":
    main()
