"""A realistic day of a small shop, for the screenshots in docs/screenshots/: two
deploys (the second one makes things worse), request metrics, errors with source
context, traces and their log records. Everything goes through the real ingest
endpoints."""

from __future__ import annotations

import secrets
import time
from typing import Any

from tests.dashboard.data import (
    checkout_trace,
    error,
    iso,
    log_record,
    logs_body,
    post_ok,
    post_requests,
)
from tests.support.server import Server

ROUTES = (("GET", "/products", 40.0), ("GET", "/checkout", 90.0), ("POST", "/cart", 25.0))


def _requests(now: float, bad_deploy_s: float) -> list[dict[str, Any]]:
    items = []
    start = int(now - 8 * 3600) // 60 * 60
    for minute in range(start, int(now) - 60, 60):
        after = minute >= bad_deploy_s
        busy = 1.0 + 0.4 * ((minute // 3600) % 3)
        for method, route, base in ROUTES:
            for i in range(int(6 * busy)):
                slow = base * (1.9 if after and route == "/checkout" else 1.0)
                duration = slow * (0.6 + (i * 37 % 17) / 10)
                failed = after and route == "/checkout" and i % 5 == 0
                items.append({"method": method, "route": route, "service": "shop",
                              "env": "production", "status": 500 if failed else 200,
                              "duration_ms": round(duration, 2),
                              "timestamp": iso(minute + 2 + i * 7)})
    return items


def seed(server: Server) -> dict[str, Any]:
    now = time.time()
    good, bad = now - 5 * 3600, now - 2 * 3600 - 17 * 60
    post_ok(server, "/ingest/deploys", {
        "git_sha": "3f9c2e1a7b5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b", "version": "2.3.0",
        "env": "production", "deployer": "ci@shop", "timestamp": iso(good),
        "description": "Cache product search results"})
    post_ok(server, "/ingest/deploys", {
        "git_sha": "b71d04c9e2aa93f1c8d2e7b6a5f4e3d2c1b0a9f8", "version": "2.4.0",
        "env": "production", "deployer": "maria", "timestamp": iso(bad),
        "description": "New payment provider client"})
    post_requests(server, _requests(now, bad))
    # An old, steady error; one that started with the bad deploy; one resolved.
    old = [error("zde-billing-total", timestamp=iso(now - h * 3600 - 300))
           for h in (1, 2, 3, 5, 8, 13, 26, 50, 75, 120, 200, 300, 400, 500, 600)]
    new = [error("timeout-payments", exception_class="TimeoutError",
                 message="payments.example: read timed out after 5.0 s",
                 backtrace=["app/payments.py:88 in charge", "app/views.py:31 in pay"],
                 source_context={"file": "app/payments.py", "lineno": 88,
                                 "pre_context": ["    def charge(self, order):",
                                                 "        body = self.encode(order)"],
                                 "context_line": "        return self.session.post(URL, "
                                                 "body, timeout=5.0)",
                                 "post_context": ["", "    def refund(self, order):"]},
                 request_id=f"req-{i}", user_id=f"user-{i % 7}",
                 timestamp=iso(bad + 120 + i * 400)) for i in range(18)]
    other = [error("keyerror-cart-sku", exception_class="KeyError", message="'sku'",
                   timestamp=iso(now - i * 5000)) for i in range(4)]
    for batch in (old, new, other):
        post_ok(server, "/ingest/errors/batch", {"errors": batch})
    trace_id = ""
    for i in range(6):
        tid, body = checkout_trace(now - 600 - i * 60, failing=i == 0)
        post_ok(server, "/ingest/v1/traces", body)
        post_ok(server, "/ingest/v1/logs", logs_body(_trace_logs(tid, body, i == 0)))
        if i == 0:
            trace_id = tid
    post_ok(server, "/ingest/errors", {**new[0], "timestamp": iso(now - 600)},
        headers={"traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"})
    post_ok(server, "/ingest/v1/logs", logs_body([
        log_record(text, int((now - 900 + n * 37) * 1e9), severity, name, **attributes)
        for n, (severity, name, text, attributes) in enumerate(WORKER_LOGS * 3)],
        service="worker", scope="jobs"))
    return {"trace_id": trace_id}


WORKER_LOGS: list[tuple[int, str, str, dict[str, Any]]] = [
    (9, "INFO", "sent order confirmation to user-3", {"job": "mailer", "attempt": 1}),
    (13, "WARN", "mail relay answered slowly (2.4 s)", {"job": "mailer"}),
    (9, "INFO", "reindexed 1,204 products", {"job": "search-index"}),
    (5, "DEBUG", "cache warm: 98.2% hits", {"job": "cache"}),
]


# As Python prints it, with the cause: the group page reads it into frames.
TAX_TRACEBACK = """Traceback (most recent call last):
  File "/srv/shop/app/tax/rates.py", line 41, in rate_for
    return RATES[region]
           ~~~~~^^^^^^^^
KeyError: 'EU-XX'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/shop/app/views.py", line 57, in checkout
    total = pricing.total(cart, region=request.region)
  File "/srv/shop/app/pricing.py", line 23, in total
    tax = tax_client.compute(subtotal, region)
  File "/srv/shop/app/tax/client.py", line 88, in compute
    rate = rates.rate_for(region)
  File "/srv/shop/app/tax/rates.py", line 43, in rate_for
    raise TaxError(f"no rate for region {region}") from exc
app.tax.errors.TaxError: no rate for region EU-XX
"""


def _trace_logs(trace_id: str, body: dict[str, Any], failing: bool) -> list[dict[str, Any]]:
    """What the shop logs while serving one checkout, each record on its span."""
    spans = {s["name"]: s for s in body["resourceSpans"][0]["scopeSpans"][0]["spans"]}

    def on(name: str, after_ms: float, text: str, severity: int = 9, level: str = "INFO",
           **attributes: Any) -> dict[str, Any]:
        span = spans[name]
        at = int(span["startTimeUnixNano"]) + int(after_ms * 1e6)
        return log_record(text, at, severity, level, trace_id=trace_id,
                          span_id=span["spanId"], **attributes)
    records = [on("GET /checkout", 1, "checkout started", **{"cart.items": 3}),
               on("SELECT orders", 2, "orders query planned", 5, "DEBUG"),
               on("POST payments", 5, "charging card via payments.example")]
    if failing:
        records.append(on("compute tax", 6, "tax service failed", 17, "ERROR", **{
            "exception.type": "TaxError", "exception.message": "no rate for region EU-XX",
            "exception.stacktrace": TAX_TRACEBACK}))
    return records
