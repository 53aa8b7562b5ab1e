"""A real WSGI application with the Sentry Python SDK and release health on, run as a
subprocess by tests/receiver/sentry/test_release_health.py so that nothing of the SDK
leaks into the test process. Usage: `python health_app.py`, with SENTRY_DSN set.

It serves requests through sentry_sdk's WSGI middleware (server mode: one session
per request, sent as `sessions` aggregates), first as release shop@1.0, then as
shop@1.1, in environment prod; then runs application-mode sessions (one `session`
item each, with a user) as worker@2.0. What each request does is FIXTURE below:
"ok" answers 200, "handled" captures an exception and answers 500 (an errored
session), "crash" raises (the middleware reports it unhandled: a crashed session).
It also sends a legacy `user_report` about the first crash through the SDK's
transport. On stdout, one JSON object: the crash event ids.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import sentry_sdk
from sentry_sdk.envelope import Envelope, Item, PayloadRef
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware

# Requests per release: what each does. Hand-counted in the test.
FIXTURE = {
    "shop@1.0": ["ok"] * 6 + ["handled"] + ["crash"] * 3,
    "shop@1.1": ["ok"] * 9 + ["crash"],
}


class Crash(RuntimeError):
    pass


def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    what = environ["PATH_INFO"].strip("/")
    if what == "crash":
        raise Crash("checkout crashed")
    if what == "handled":
        try:
            raise ValueError("card declined")
        except ValueError as exc:
            sentry_sdk.capture_exception(exc)
        start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
        return [b"declined"]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


CRASHES: list[str] = []
# Uncompressed: the test records the envelopes and sends them again as they are.
PLAIN: dict[str, Any] = {"transport_compression_level": 0}


def note_crash(event: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    """before_send: the ids of the crash events, for the user report."""
    if isinstance(hint.get("exc_info", (None, None))[1], Crash):
        CRASHES.append(event["event_id"])
    return event


def serve(release: str) -> None:
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], release=release, environment="prod",
                    auto_session_tracking=True, default_integrations=False,
                    before_send=note_crash, _experiments=PLAIN)
    wrapped = SentryWsgiMiddleware(app)
    for what in FIXTURE[release]:
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": f"/{what}", "SERVER_NAME": "shop",
                   "SERVER_PORT": "80", "wsgi.url_scheme": "http", "QUERY_STRING": "",
                   "wsgi.input": sys.stdin.buffer, "wsgi.errors": sys.stderr}
        try:
            b"".join(wrapped(environ, lambda status, headers, exc=None: None))
        except Crash:
            pass
    sentry_sdk.flush()


def workers() -> None:
    """Application-mode sessions of worker@2.0: u1 exits cleanly, u2 has an error,
    u2 again exits cleanly."""
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], release="worker@2.0", environment="prod",
                    default_integrations=False, _experiments=PLAIN)
    for user, fails in [("u1", False), ("u2", True), ("u2", False)]:
        scope = sentry_sdk.get_isolation_scope()
        sentry_sdk.set_user({"id": user})
        scope.start_session(session_mode="application")
        if fails:
            try:
                raise KeyError("missing job")
            except KeyError as exc:
                sentry_sdk.capture_exception(exc)
        scope.end_session()
    sentry_sdk.flush()


def user_report(event_id: str) -> None:
    envelope = Envelope()
    envelope.add_item(Item(PayloadRef(json={
        "event_id": event_id, "name": "Ada <b>Lovelace</b>", "email": "ada@example.com",
        "comments": "It crashed when I paid <script>alert(1)</script>"}), type="user_report"))
    client = sentry_sdk.get_client()
    assert client.transport is not None
    client.transport.capture_envelope(envelope)
    sentry_sdk.flush()


def main() -> None:
    serve("shop@1.0")
    serve("shop@1.1")
    workers()
    user_report(CRASHES[0])
    print(json.dumps({"crashes": CRASHES}))


if __name__ == "__main__":
    main()
