"""The writer process and how it writes: its SQL matches the schema, it survives
its own death, and several collectors can share one port and one database."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import requests
from sqlalchemy import create_engine

from storage import schema, spanbody
from storage.store import Store
from storage.wire.batch import write_batches
from storage.writer import commit as writer_mod
from storage.writer import groups
from tests.exporters.senders import SPANS_PER_REQUEST, error_batch, trace_request
from tests.exporters.sql.test_durability import _descendants
from tests.support.server import Server


def test_writer_sql_names_match_the_schema() -> None:
    """The writer spells table and column names out (so that its process need not
    import SQLAlchemy); they must be the schema's."""
    def columns(table: object) -> set[str]:
        return {c.name for c in table.columns}  # type: ignore[attr-defined]

    assert set(writer_mod.SPAN_COLUMNS) == columns(schema.spans)
    assert set(writer_mod.RESOURCE_COLUMNS) == columns(schema.resources)
    assert set(writer_mod.ERROR_COLUMNS) == columns(schema.error_events) - {"id"}
    assert set(writer_mod.DEPLOY_COLUMNS) == columns(schema.deploys) - {"id"}
    names = {writer_mod.SPANS, writer_mod.RESOURCES, writer_mod.ERROR_EVENTS, writer_mod.DEPLOYS,
             groups.GROUPS, groups.HOURLY, groups.STATUS_CHANGES,
             groups.ROLLUPS, groups.LATENCY}
    assert names <= set(schema.metadata.tables)
    assert groups.ROLLUP_KEY == schema.ROLLUP_KEY


def test_write_batches_round_trip(tmp_path: Path) -> None:
    """Every field of every record kind, written through the DBAPI path, reads back."""
    from model.records import Batch, Deploy, ErrorEvent, RequestMetric, SourceContext, Span
    from processors.grouping import GroupingProcessor
    from processors.reopen import ReopenProcessor

    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    store.upgrade()
    span = Span("ab" * 16, "cd" * 8, "", "GET /x", 2, 10, 20, 2, "boom", "svc", "scope",
                {"service.name": "svc", "n": 1.5}, {"http.method": "GET", "ok": True},
                [{"name": "e", "time_unix_nano": 15, "attributes": {"k": [1, "two"]}}],
                "http", {"http.request.method": "GET"})
    error = ErrorEvent("fp", "KeyError", "missing é", ["a.py:1"], 1_000_000, "r1", "u1",
                       {"x": {"y": None}}, SourceContext("a.py", 1, "x = d[k]", ["pre"], []),
                       "ab" * 16, "cd" * 8)
    batch = Batch(project_id=1, spans=[span], errors=[error],
                  deploys=[Deploy("abc123", 5, "1.0", "prod", "ci", "notes")],
                  requests=[RequestMetric("GET", "/x", 503, 12.5, 60_000_000, "svc", "prod")])
    batch = ReopenProcessor("r").process(GroupingProcessor("g").process(batch))
    with store.writer.begin() as conn:
        write_batches(conn, [batch, batch], received_us=7)
    engine = create_engine(store.url)
    with engine.connect() as conn:
        spans = conn.execute(schema.spans.select()).all()
        (resource,) = conn.execute(schema.resources.select()).all()
        events = conn.execute(schema.error_events.select()).all()
        (group,) = conn.execute(schema.error_groups.select()).all()
        (deploy, _) = conn.execute(schema.deploys.select()).all()
        (rollup,) = conn.execute(schema.request_rollups.select()).all()
    engine.dispose()
    store.dispose()
    assert len(spans) == 1  # the same span twice is stored once
    s = spans[0]
    assert (s.trace_id, s.span_id, s.parent_span_id, s.name, s.kind, s.start_ns, s.end_ns,
            s.status_code, s.status_message, s.category) == (
        bytes.fromhex("ab" * 16), bytes.fromhex("cd" * 8), b"", "GET /x", 2, 10, 20, 2, "boom",
        "http")
    attributes, span_events = spanbody.decode(s.body)
    assert attributes == {"http.method": "GET", "ok": True}
    assert resource.id == s.resource_id and resource.project_id == 1
    assert resource.attributes == {"service.name": "svc", "n": 1.5}
    assert span_events == [{"name": "e", "time_unix_nano": 15,
                            "attributes": {"k": [1, "two"]}}]
    assert len(events) == 2
    e = events[0]
    assert (e.fingerprint, e.message, e.request_id, e.user_id, e.received_us) == (
        "fp", "missing é", "r1", "u1", 7)
    assert e.params == {"x": {"y": None}} and e.backtrace == ["a.py:1"]
    assert e.source_context == {"file": "a.py", "lineno": 1, "context_line": "x = d[k]",
                                "pre_context": ["pre"], "post_context": []}
    assert (group.count, group.first_seen_us, group.last_seen_us) == (2, 1_000_000, 1_000_000)
    assert (deploy.git_sha, deploy.version, deploy.env, deploy.deployer, deploy.description,
            deploy.ts_us, deploy.received_us) == ("abc123", "1.0", "prod", "ci", "notes", 5, 7)
    assert (rollup.count, rollup.error_count, rollup.duration_sum_ms) == (2, 2, 25.0)


def _writer_pid(server: Server) -> int:
    (pid,) = [p for p in _descendants(server.proc.pid)
              if b"exporters.sql.writer" in Path(f"/proc/{p}/cmdline").read_bytes()]
    return pid


def test_a_dead_writer_process_is_replaced_and_ingest_recovers(
        start: Callable[..., Server]) -> None:
    server = start()
    first = uuid.uuid4().hex
    assert server.post("/ingest/errors/batch", error_batch(first)).status_code == 202
    old = _writer_pid(server)
    os.kill(old, signal.SIGKILL)
    # Until a new writer runs, ingest answers 503 with Retry-After, never 500.
    after = uuid.uuid4().hex
    deadline = time.monotonic() + 30
    while True:
        response = server.post("/ingest/errors/batch", error_batch(after))
        if response.status_code == 202:
            break
        assert response.status_code == 503 and "Retry-After" in response.headers
        assert time.monotonic() < deadline, "ingest did not recover"
        time.sleep(0.1)
    assert _writer_pid(server) != old
    stored = {r.request_id for r in server.query("SELECT request_id FROM error_events")}
    assert {f"{first}-{i}" for i in range(10)} | {f"{after}-{i}" for i in range(10)} == stored
    assert "the writer process stopped" in server.log()


def test_collectors_share_one_port_with_reuse_port(start: Callable[..., Server],
                                                   sqlite_url: str) -> None:
    env = {"SOUNDING__RECEIVERS__HTTP__REUSE_PORT": "true"}
    first = start(sqlite_url, env=env)
    port = first.base.rsplit(":", 1)[1]
    # Without SO_REUSEPORT the second bind fails and the collector does not start.
    second = start(sqlite_url, env={**env, "SOUNDING_HTTP_PORT": port})
    assert second.base == first.base
    traces = [uuid.uuid4().hex for _ in range(20)]
    for trace in traces:  # a new connection each time: the kernel spreads them
        response = requests.post(first.base + "/ingest/v1/traces",
                                 data=trace_request(bytes.fromhex(trace)),
                                 headers={"Authorization": f"Bearer {first.key}",
                                          "Content-Type": "application/x-protobuf",
                                          "Connection": "close"}, timeout=30)
        assert response.status_code == 202
    counts = first.spans_per_trace()
    assert counts == {t: SPANS_PER_REQUEST for t in traces}
