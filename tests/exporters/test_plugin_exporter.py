"""A third-party exporter installed by entry point (tests/plugin_pkg, group
`sounding.exporters`) receives every batch of every signal: beside the SQL exporter,
alone, from the event loop and from a decode worker, with and without a preparation
of its own."""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from model.errors import ConfigError
from runtime.plugins import build_exporter
from sounding.config import DEFAULT_PROCESSORS
from tests.exporters.senders import error_batch, trace_request
from tests.receiver.test_otlp_http import post
from tests.runtime.test_offload import _workers
from tests.support.server import Server, start_server

# Trace bodies from this size go to a decode worker; the test sends one on each side.
DECODE_MIN_BYTES = 8192
WORKERS = {"SOUNDING_DECODE_WORKERS": "1",
           "SOUNDING__SERVICE__DECODE_MIN_BYTES": str(DECODE_MIN_BYTES)}


def write_config(tmp_path: Path, exporters: dict[str, Any], order: list[str]) -> str:
    path = tmp_path / "sounding.yaml"
    path.write_text(json.dumps({  # JSON is YAML
        "exporters": exporters,
        "service": {"pipeline": {
            "receivers": ["http"], "processors": DEFAULT_PROCESSORS, "exporters": order}},
    }))
    return str(path)


@dataclass
class Sent:
    """Every record sent, by the id the plugin writes for it."""

    spans: set[str] = field(default_factory=set)  # trace_id:span_id
    errors: set[str] = field(default_factory=set)  # request_id
    deploys: set[str] = field(default_factory=set)  # git_sha
    requests: set[str] = field(default_factory=set)  # request_id
    # Trace ids of the small body (decoded inline) and the large one (in a worker).
    inline_trace: str = ""
    offloaded_trace: str = ""


def _offloaded(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(r"^sounding_decode_offloaded_requests_total (\S+)$", text, re.M)
    assert match, "no offload counter in /metrics"
    return float(match.group(1))


def send_every_signal(server: Server) -> Sent:
    """A small OTLP body (decoded on the event loop), a large one (in a decode
    worker), a batch of errors, a deploy and request metrics; each answered 202."""
    sent = Sent()
    before = _offloaded(server)
    for spans in (3, 200):
        trace_id = os.urandom(16)
        body = trace_request(trace_id, spans=spans)
        assert (len(body) >= DECODE_MIN_BYTES) == (spans == 200)
        assert post(server, body).status_code == 202
        sent.spans |= {f"{trace_id.hex()}:{i:016x}" for i in range(1, spans + 1)}
        if spans == 3:
            sent.inline_trace = trace_id.hex()
        else:
            sent.offloaded_trace = trace_id.hex()
    assert _offloaded(server) == before + 1  # the large one, only
    tag = uuid.uuid4().hex
    assert server.post("/ingest/errors/batch", error_batch(tag)).status_code == 202
    sent.errors = {f"{tag}-{i}" for i in range(len(error_batch(tag)["errors"]))}
    sent.deploys = {uuid.uuid4().hex[:12]}
    assert server.post("/ingest/deploys", {"git_sha": next(iter(sent.deploys))}
                       ).status_code == 202
    sent.requests = {f"{tag}-r{i}" for i in range(3)}
    assert server.post("/ingest/requests", {"requests": [
        {"method": "GET", "route": "/x", "status": 200, "duration_ms": 1.5,
         "request_id": request_id} for request_id in sorted(sent.requests)]}
                       ).status_code == 202
    return sent


def collected(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def assert_collected_all(lines: list[dict[str, Any]], sent: Sent) -> None:
    """Every record sent is in exactly one line, and nothing else is."""
    for kind in ("spans", "errors", "deploys", "requests"):
        got = [record for line in lines for record in line[kind]]
        assert sorted(got) == sorted(getattr(sent, kind)), kind
        assert sum(line["counts"][kind] for line in lines) == len(got)


def line_of_trace(lines: list[dict[str, Any]], trace_id: str) -> dict[str, Any]:
    (line,) = [line for line in lines if any(s.startswith(trace_id) for s in line["spans"])]
    return line


def assert_sql_stored(server: Server, sent: Sent) -> None:
    stored = server.spans_per_trace()
    assert stored == {sent.inline_trace: 3, sent.offloaded_trace: 200}
    assert {r.request_id for r in server.query("SELECT request_id FROM error_events")
            } == sent.errors
    assert {r.git_sha for r in server.query("SELECT git_sha FROM deploys")} == sent.deploys
    (total,) = server.query("SELECT sum(count) AS n FROM request_rollups")
    assert total.n == len(sent.requests)


def test_a_plugin_exporter_beside_sql_receives_every_record(
        start: Callable[..., Server], tmp_path: Path) -> None:
    out = tmp_path / "collected.jsonl"
    server = start(config=write_config(tmp_path, {"collect": {"path": str(out)}},
                                       ["sql", "collect"]), env=WORKERS)
    sent = send_every_signal(server)
    lines = collected(out)
    assert_collected_all(lines, sent)
    assert {line["exporter"] for line in lines} == {"collect"}
    # Declaring no preparation, it is handed the batch a worker processed.
    assert line_of_trace(lines, sent.offloaded_trace)["via"] == "export"
    assert_sql_stored(server, sent)


def test_a_plugin_exporter_alone_keeps_the_decode_workers_working(
        start: Callable[..., Server], tmp_path: Path) -> None:
    out = tmp_path / "collected.jsonl"
    server = start(config=write_config(tmp_path, {"collect": {"path": str(out)}},
                                       ["collect"]), env=WORKERS)
    sent = send_every_signal(server)  # asserts the large body went to the worker
    assert len(_workers(server)) == 1
    assert_collected_all(collected(out), sent)
    # With no SQL exporter in the pipeline, nothing reached the store.
    assert server.spans_per_trace() == {}
    assert server.query("SELECT request_id FROM error_events") == []


def test_a_plugin_preparation_runs_in_a_decode_worker_and_reaches_export_prepared(
        start: Callable[..., Server], tmp_path: Path) -> None:
    out = tmp_path / "collected.jsonl"
    server = start(config=write_config(
        tmp_path, {"collect_prepared/p": {"path": str(out)}}, ["sql", "collect_prepared/p"]),
        env=WORKERS)
    sent = send_every_signal(server)
    (worker,) = _workers(server)  # started by the large body
    lines = collected(out)
    assert_collected_all(lines, sent)
    prepared = line_of_trace(lines, sent.offloaded_trace)
    # Summarised by `summary` in the worker, with the settings its preparation named,
    # and handed to export_prepared unopened.
    assert (prepared["via"], prepared["pid"], prepared["prepared_for"]) == (
        "export_prepared", worker, "collect_prepared/p")
    # Everything else was decoded on the event loop and came to `export`.
    others = [line for line in lines if line is not prepared]
    assert others and all(line["via"] == "export" and line["pid"] == server.proc.pid
                          for line in others)
    # The SQL exporter's own preparation ran in the same worker beside it.
    assert_sql_stored(server, sent)


def test_a_plugin_exporter_section_is_checked_like_a_built_in_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key exporters\.collect\.pth "
                                          r"\(did you mean path\?\)"):
        build_exporter("collect", {"path": "x", "pth": "y"})
    with pytest.raises(ConfigError, match=r"exporters\.collect\.path must name the file"):
        build_exporter("collect", {})
    config = write_config(tmp_path, {"collect": {"path": str(tmp_path / "c"), "pth": 1}},
                          ["collect"])
    with pytest.raises(RuntimeError, match="exited with 2") as info:
        start_server(f"sqlite:///{tmp_path / 'db.sqlite'}", config=config)
    assert "exporters.collect.pth" in str(info.value)
