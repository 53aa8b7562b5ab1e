"""Repeated server errors are logged once per kind per interval with a count
(runtime/logthrottle.py), never a traceback per request."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
import requests

from proto.sounding.v1 import ingest_pb2, ingest_pb2_grpc
from runtime.logthrottle import MAX_KINDS, RepeatFilter
from tests.receiver.otlp_helpers import grpc_auth
from tests.receiver.test_errors import error
from tests.support.server import Server

FAILURES = 200


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def failing_record(line: int = 1) -> logging.LogRecord:
    try:
        exec(compile("\n" * (line - 1) + "raise RuntimeError('request 7')", "bug.py", "exec"))
    except RuntimeError:
        exc_info = sys.exc_info()
    return logging.LogRecord("app", logging.ERROR, "x.py", 1, "failed %s", ("req",), exc_info)


def test_one_record_per_kind_per_window_then_a_count() -> None:
    clock = Clock()
    emitted: list[logging.LogRecord] = []
    throttle = RepeatFilter(60, emitted.append, clock)
    assert throttle.filter(failing_record())
    assert not any(throttle.filter(failing_record()) for _ in range(5))
    # Another place raising the same type is another kind.
    assert throttle.filter(failing_record(line=2))
    # Below ERROR and without a traceback: not ours to throttle.
    info = logging.LogRecord("app", logging.INFO, "x.py", 1, "fine", (), None)
    assert all(throttle.filter(info) for _ in range(3))
    clock.now += 61
    throttle.flush()
    (line,) = [r.getMessage() for r in emitted]
    assert line == "failed req (RuntimeError: request 7): 5 more like this in the last 60 s"
    assert emitted[0].exc_info is None
    # A new window opens with the record itself, traceback included.
    assert throttle.filter(failing_record())


def test_every_handler_gets_the_same_answer_for_one_record() -> None:
    """The filter sits on each root handler: a record asked by a second handler is
    neither a repeat of itself nor counted twice."""
    clock = Clock()
    emitted: list[logging.LogRecord] = []
    throttle = RepeatFilter(60, emitted.append, clock)
    first, second = failing_record(), failing_record()
    assert [throttle.filter(first) for _ in range(3)] == [True, True, True]
    assert [throttle.filter(second) for _ in range(3)] == [False, False, False]
    throttle.flush()
    assert [r.getMessage() for r in emitted] == [
        "failed req (RuntimeError: request 7): 1 more like this in the last 60 s"]


def test_a_kind_and_level_of_ones_own_throttle_info_records() -> None:
    """As the refused-requests log uses it (receiver/refusals.py)."""
    clock = Clock()
    emitted: list[logging.LogRecord] = []
    throttle = RepeatFilter(10, emitted.append, clock, kind=lambda r: r.args,
                            min_level=logging.INFO)

    def info(*args: object) -> logging.LogRecord:
        return logging.LogRecord("refused", logging.INFO, "x.py", 1, "%s %s", args, None)

    assert not throttle.suppressed((401, "errors"))  # no window yet: make the record
    assert throttle.filter(info(401, "errors"))
    assert not throttle.filter(info(401, "errors"))
    assert throttle.suppressed((401, "errors"))  # counted without a record
    assert throttle.filter(info(415, "errors"))
    clock.now += 11
    throttle.flush()  # the window's end (its timer, on the real clock)
    assert [r.getMessage() for r in emitted] == [
        "401 errors: 2 more like this in the last 10 s"]
    assert not throttle.suppressed((401, "errors"))
    assert throttle.filter(info(401, "errors"))


def test_a_repeated_server_failure_logs_one_traceback_and_a_count(
        start: Callable[..., Server], tmp_path: Path) -> None:
    """The explode plugin (tests/plugin_pkg) fails every batch whose fingerprint starts
    with `boom`: a real server-side failure, answered 500 / INTERNAL, 200 times over
    each transport."""
    config = tmp_path / "sounding.yaml"
    config.write_text(json.dumps({
        "processors": {"explode": {}, "grouping": {}, "reopen": {}},
        "service": {"pipeline": {
            "receivers": ["http", "otlp_grpc"], "processors": ["explode", "grouping", "reopen"],
            "exporters": ["sql"]}},
    }))
    server = start(config=str(config))
    with requests.Session() as session:
        for i in range(FAILURES):
            response = session.post(server.base + "/ingest/errors", json=error(
                fingerprint=f"boom-{i}", message=f"request {i}"), headers=server.headers())
            assert response.status_code == 500, response.text
    with grpc.insecure_channel(server.grpc_target) as channel:
        stub = ingest_pb2_grpc.ErrorServiceStub(channel)
        record = ingest_pb2.ErrorRecord(exception_class="E", message="m", fingerprint="boom")
        for _ in range(FAILURES):
            try:
                stub.Report(record, metadata=grpc_auth(server), timeout=10)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.INTERNAL
            else:
                raise AssertionError("the explode processor did not fail the call")
    assert server.stop() == 0
    log = server.log()
    # One traceback per kind: the HTTP handler's and the gRPC wrapper's.
    assert log.count("Traceback") == 2, log
    assert log.count("the explode processor failed on purpose") <= 6, log
    # The rest summarised, at exit at the latest: every HTTP failure also had an
    # access-log line at ERROR, throttled the same way.
    assert log.count(f"{FAILURES - 1} more like this in the last 60 s") == 3, log
    assert len(log.splitlines()) < 150, log
    server.output.clear()  # the tracebacks above are the point of this test


def test_kinds_are_bounded_and_ended_windows_make_room() -> None:
    clock = Clock()
    throttle = RepeatFilter(60, None, clock)

    def record(n: int) -> logging.LogRecord:
        return logging.LogRecord("app", logging.ERROR, "x.py", 1, f"kind {n}", (), None)

    assert all(throttle.filter(record(n)) for n in range(MAX_KINDS))
    # Past the bound, new kinds share one window: the first passes, the rest wait.
    assert throttle.filter(record(MAX_KINDS)) and not throttle.filter(record(MAX_KINDS + 1))
    clock.now += 61
    assert throttle.filter(record(MAX_KINDS + 2)) and throttle.filter(record(MAX_KINDS + 3))
