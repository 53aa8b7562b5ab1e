"""The real Sentry Python SDK sending the secrets corpus (tests/processors/
test_scrub_doors.py): run as a subprocess with SENTRY_DSN and CORPUS (JSON) set, so
that nothing of the SDK leaks into the test process. Two errors of one bug, differing
only by the card number, each with a request carrying secrets, a user, breadcrumbs,
extra data; and a transaction whose span carries secrets."""

from __future__ import annotations

import json
import os
from typing import Any

import sentry_sdk

CORPUS: dict[str, str] = json.loads(os.environ["CORPUS"])


def add_request(event: dict[str, Any], _hint: Any) -> dict[str, Any]:
    event["request"] = {
        "url": "https://shop.example/pay?api_key=" + CORPUS["token"],
        "method": "POST",
        "headers": {"Authorization": "Bearer " + CORPUS["bearer"],
                    "Cookie": "sessionid=" + CORPUS["token"], "User-Agent": "Mozilla/5.0"},
        "data": {"password": CORPUS["password"], "card": CORPUS["card"]},
    }
    return event


def charge(customer: str, card: str) -> None:
    raise ValueError(f"payment for {customer} failed with card {card}")


def main() -> None:
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], traces_sample_rate=1.0,
                    send_default_pii=True, before_send=add_request,
                    before_send_transaction=add_request)
    sentry_sdk.set_user({"id": CORPUS["user"], "ip_address": "203.0.113.9",
                         "password": CORPUS["password"]})
    sentry_sdk.set_extra("auth_token", CORPUS["token"])
    for card in (CORPUS["card"], CORPUS["card2"]):
        sentry_sdk.add_breadcrumb(category="http", message=f"charging card {card}",
                                  data={"authorization": "Bearer " + CORPUS["bearer"]})
        try:
            charge(CORPUS["customer"], card)
        except ValueError:
            sentry_sdk.capture_exception()
    with sentry_sdk.start_transaction(name="checkout", op="http.server"):
        with sentry_sdk.start_span(op="db", description="SELECT card") as span:
            span.set_data("password", CORPUS["password"])
            span.set_data("note", "paid with " + CORPUS["card"])
    sentry_sdk.flush(10)


if __name__ == "__main__":
    main()
