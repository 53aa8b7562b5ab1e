"""Two collector processes writing one database at once (PostgreSQL, as several
stateless collectors would; and one SQLite file): grouping counts, first/last
seen and rollups stay exact (atomic upserts); the same log records sent to both
(a retry reaching another collector), in varying order, are stored once."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import requests
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests.receiver.logs_helpers import log_pb, logs_request
from tests.receiver.otlp_helpers import attributes_pb, request_of, span_pb
from tests.receiver.test_errors import error
from tests.support.server import Server

FINGERPRINTS = [f"fp-{i}" for i in range(5)]
ROUNDS = 40
LOG_TRACE = "ab" * 16
LOG_RECORDS = [log_pb(LOG_TRACE, f"line {i}") for i in range(50)]


def _send(server: Server, round_no: int) -> None:
    # Every request touches every group, in a different order each time, so that
    # the two processes' transactions overlap on the same rows.
    order = FINGERPRINTS[round_no % 5:] + FINGERPRINTS[:round_no % 5]
    minute = f"2026-11-21T10:{round_no % 60:02d}:00Z"
    batch = {"errors": [error(fingerprint=fp, timestamp=minute) for fp in order * 2]}
    assert server.post("/ingest/errors/batch", batch).status_code == 202
    requests_body = {"requests": [{"method": "GET", "route": "/r", "status": 200,
                                   "duration_ms": 10.0, "timestamp": "2026-11-21T10:00:30Z"}]}
    assert server.post("/ingest/requests", requests_body).status_code == 202
    # The same records in another order each time: the two processes' transactions
    # insert the same keys at once.
    at = round_no * 7 % len(LOG_RECORDS)
    logs = logs_request(*(LOG_RECORDS[at:] + LOG_RECORDS[:at])).SerializeToString()
    response = requests.post(server.base + "/ingest/v1/logs", data=logs, timeout=60, headers={
        "Authorization": f"Bearer {server.key}", "Content-Type": "application/x-protobuf"})
    assert response.status_code == 202, response.text


def test_two_collectors_one_database_exact_counts(start: Callable[..., Server],
                                                  db_url: str) -> None:
    first = start(db_url)
    second = start(db_url)
    servers = itertools.cycle([first, second])
    jobs = [(next(servers), n) for n in range(ROUNDS)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda job: _send(*job), jobs))
    rows = first.query("SELECT fingerprint, count, first_seen_us, last_seen_us "
                       "FROM error_groups ORDER BY fingerprint")
    assert [r.fingerprint for r in rows] == FINGERPRINTS
    for row in rows:
        assert row.count == ROUNDS * 2
        assert row.first_seen_us == 1_795_255_200_000_000  # 10:00
        assert row.last_seen_us == 1_795_255_200_000_000 + 39 * 60_000_000  # 10:39
    hourly = first.query("SELECT sum(count) FROM error_group_hourly")[0][0]
    assert hourly == ROUNDS * 2 * len(FINGERPRINTS)
    assert first.query("SELECT count FROM request_rollups")[0][0] == ROUNDS
    assert first.query("SELECT sum(count) FROM request_latency")[0][0] == ROUNDS
    assert second.query("SELECT count(*) FROM logs")[0][0] == len(LOG_RECORDS)


def _exception_request(n: int) -> bytes:
    """One span with an exception event; each `n` is another occurrence."""
    span = span_pb("ab" * 16, f"{n + 1:016x}")
    span.events.add(name="exception", time_unix_nano=1_795_255_200_000_000_000 + n,
                    attributes=attributes_pb({
                        "exception.type": AnyValue(string_value="KeyError"),
                        "exception.message": AnyValue(string_value=f"'sku-{n}'")}))
    return request_of(span, service="shop").SerializeToString()


def test_one_exception_sent_to_two_collectors_at_once_counts_once(
        start: Callable[..., Server], db_url: str) -> None:
    # An exporter that retries on another collector (or sends the same exception as a
    # span event and as a log record to two of them): one occurrence, not two.
    servers = [start(db_url), start(db_url)]
    jobs = [(server, n) for n in range(ROUNDS) for server in servers]

    def send(job: tuple[Server, int]) -> None:
        server, n = job
        response = server.post("/ingest/v1/traces", data=_exception_request(n),
                               headers={"Content-Type": "application/x-protobuf"})
        assert response.status_code == 202, response.text

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(send, jobs))
    first = servers[0]
    assert first.query("SELECT count(*) FROM error_events")[0][0] == ROUNDS
    assert first.query("SELECT count(DISTINCT occurrence_key) FROM error_events")[0][0] == ROUNDS
    assert first.query("SELECT count, exception_class FROM error_groups") == [(ROUNDS, "KeyError")]
    assert first.query("SELECT sum(count) FROM error_group_hourly")[0][0] == ROUNDS
