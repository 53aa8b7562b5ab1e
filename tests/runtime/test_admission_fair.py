"""Fair shedding (runtime/admission.py): while the collector is saturated, the
projects at or above their fair share of the requests in flight are refused and the
others admitted, up to the reserve; and on the real server, a project flooding past
`service.max_requests_in_flight` is shed with 503 + Retry-After while a quiet one is
never refused."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from runtime.admission import Admission
from tests.receiver.otlp_helpers import random_trace_id, request_of, span_pb
from tests.receiver.sentry.helpers import KEY, KEYS, OTHER_KEY
from tests.receiver.test_limits import ERROR
from tests.receiver.test_limits_flood import send
from tests.support.server import Server


def test_the_project_above_its_fair_share_is_refused_first() -> None:
    admission = Admission(max_in_flight=10, max_lag_ms=0)
    with contextlib.ExitStack() as held:
        for _ in range(10):
            held.enter_context(admission.admitted(1))  # A fills the collector
        assert admission.refusal(1) is not None  # A: saturated, above its share
        assert admission.refusal(None) is not None  # who is unknown: refused too
        assert admission.refusal(2) is None  # B: none in flight
        held.enter_context(admission.admitted(2))
        # B at 1 of 11 in flight, two projects: its share is 5.5.
        assert admission.refusal(2) is None
        for _ in range(admission.reserve - 1):
            held.enter_context(admission.admitted(2))
        # The reserve is spent: nobody more.
        assert admission.refusal(2) is not None and admission.refusal(3) is not None
    assert admission.in_flight == 0 and admission.by_project == {}
    assert admission.refusal(1) is None


def test_a_flooding_project_is_shed_and_a_quiet_one_never(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, keys=KEYS,
                   env={"SOUNDING__SERVICE__MAX_REQUESTS_IN_FLIGHT": "2"})
    parts = urlsplit(server.base)
    address = (parts.hostname or "127.0.0.1", parts.port or 80)
    body = request_of(*(span_pb(random_trace_id(), f"{i + 1:016x}")
                        for i in range(200))).SerializeToString()
    flood: list[tuple[int, str | None]] = []
    quiet: list[tuple[int, str | None]] = []
    until = time.monotonic() + 3
    threads = [threading.Thread(target=send, args=(
        address, "/ingest/v1/traces", KEY, body, "application/x-protobuf", until, 0, flood))
        for _ in range(12)]
    threads.append(threading.Thread(target=send, args=(
        address, "/ingest/errors", OTHER_KEY, json.dumps(ERROR).encode(), "application/json",
        until, 1 / 20, quiet)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shed = [after for status, after in flood if status == 503]
    assert shed and all(after is not None for after in shed), {s for s, _ in flood}
    assert {status for status, _ in flood} <= {202, 503}
    assert quiet and {status for status, _ in quiet} == {202}, quiet
