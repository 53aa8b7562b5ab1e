"""A real application reporting through Python's sentry-sdk with its own HTTP
transport, run as a subprocess by tests/receiver/test_limits_clients.py. Usage:
`python -m tests.receiver.sentry.sentry_sdk_limits_client <dsn> <errors>`.

It sends `errors` messages one at a time (flushing after each, so each is its own
request), then one transaction, and prints one JSON object: the categories the
SDK's transport holds as rate limited (`_disabled_until`), the lost events it
counted by (reason, category), and how many envelopes it posted.
"""

from __future__ import annotations

import json
import sys

import sentry_sdk
from sentry_sdk.transport import HttpTransport

POSTED: list[int] = []


class CountingTransport(HttpTransport):
    """The SDK's own HTTP transport, counting the requests it actually makes."""

    def _send_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        POSTED.append(1)
        return super()._send_request(*args, **kwargs)


def main() -> None:
    dsn, errors = sys.argv[1], int(sys.argv[2])
    sentry_sdk.init(dsn=dsn, transport=CountingTransport, traces_sample_rate=1.0,
                    send_client_reports=True)
    client = sentry_sdk.get_client()
    for i in range(errors):
        sentry_sdk.capture_message(f"limited {i}", level="error")
        client.flush(timeout=5)
    with sentry_sdk.start_transaction(name="GET /after", op="http.server"):
        pass
    client.flush(timeout=5)
    transport = client.transport
    assert isinstance(transport, CountingTransport)
    print(json.dumps({
        "disabled": sorted(str(c) for c in transport._disabled_until),
        "lost": {f"{reason}:{category}": n
                 for (category, reason), n in transport._discarded_events.items()},
        "posted": len(POSTED)}))
    sentry_sdk.get_client().close(timeout=5)


if __name__ == "__main__":
    main()
