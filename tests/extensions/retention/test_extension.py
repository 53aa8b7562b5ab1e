"""The retention sweep through a running collector (extensions/retention/),
on SQLite and PostgreSQL: old spans, logs and errors sent over the real doors are
gone after a sweep, new ones stay."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

import pytest

from extensions.retention.extension import factory
from model.errors import ConfigError
from tests.support.server import Server

HOUR_NS = 3600 * 10**9
RETENTION = {"SOUNDING__RETENTION__SPANS": "1h", "SOUNDING__RETENTION__LOGS": "1h",
             "SOUNDING__RETENTION__ERROR_OCCURRENCES": "1h",
             "SOUNDING__RETENTION__SWEEP_EVERY_SECONDS": "1"}


def traces(*starts_ns: int) -> dict[str, Any]:
    spans = [{"traceId": f"{i + 1:032x}", "spanId": f"{i + 1:016x}", "name": "GET /",
              "kind": 2, "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 10**6)}
             for i, start in enumerate(starts_ns)]
    return {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "shop"}}]},
        "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]}


def logs(*times_ns: int) -> dict[str, Any]:
    records = [{"timeUnixNano": str(t), "severityNumber": 9, "body": {"stringValue": f"r{i}"}}
               for i, t in enumerate(times_ns)]
    return {"resourceLogs": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "shop"}}]},
        "scopeLogs": [{"scope": {"name": "s"}, "logRecords": records}]}]}


def error(at: dt.datetime, fingerprint: str) -> dict[str, Any]:
    return {"exception_class": "KeyError", "message": "boom", "backtrace": ["a.py:1 in f"],
            "fingerprint": fingerprint, "timestamp": at.isoformat()}


def count(server: Server, sql: str) -> int:
    return int(server.query(sql)[0][0])


def test_old_data_sent_to_a_running_collector_is_swept(start: Callable[..., Server],
                                                        db_url: str) -> None:
    server = start(db_url, env=RETENTION)
    now_ns = time.time_ns()
    now = dt.datetime.now(dt.UTC)
    assert server.post("/ingest/v1/traces", traces(now_ns - 2 * HOUR_NS, now_ns)
                       ).status_code == 202
    assert server.post("/ingest/v1/logs", logs(now_ns - 2 * HOUR_NS, now_ns)
                       ).status_code == 202
    for at, fingerprint in ((now - dt.timedelta(hours=2), "old"), (now, "new")):
        assert server.post("/ingest/errors", error(at, fingerprint)).status_code == 202
    deadline = time.monotonic() + 60
    while count(server, "SELECT count(*) FROM error_groups") > 1:
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.2)
    assert [r[0] for r in server.query("SELECT start_ns FROM spans")] == [now_ns]
    assert [r[0] for r in server.query("SELECT time_ns FROM logs")] == [now_ns]
    assert [r[0] for r in server.query("SELECT fingerprint FROM error_events")] == ["new"]
    assert [r[0] for r in server.query("SELECT fingerprint FROM error_groups")] == ["new"]
    server.wait_for_log("retention: deleted")


def test_off_keeps_everything(start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={**RETENTION, "SOUNDING__RETENTION__ENABLED": "false"})
    now_ns = time.time_ns()
    assert server.post("/ingest/v1/traces", traces(now_ns - 2 * HOUR_NS)).status_code == 202
    time.sleep(3)  # three sweep intervals
    assert count(server, "SELECT count(*) FROM spans") == 1
    assert "retention" not in server.log()


def test_a_bad_setting_stops_the_collector_naming_it() -> None:
    with pytest.raises(ConfigError, match="retention.spans"):
        factory.validate("retention", factory.complete({"spans": "a week"}, "retention"))
