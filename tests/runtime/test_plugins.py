"""Third-party processors from the entry-point group `sounding.processors`
(tests/plugin_pkg, installed by `make test` like any plugin package)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from model.component import Processor
from model.errors import ConfigError
from runtime.plugins import build_processor
from tests.receiver.otlp_helpers import (
    attributes_pb,
    random_trace_id,
    request_of,
    span_pb,
    stored_spans,
)
from tests.receiver.test_errors import error
from tests.receiver.test_otlp_http import post
from tests.support.server import Server, start_server


def write_config(tmp_path: Path, processors: dict[str, object], order: list[str]) -> str:
    path = tmp_path / "sounding.yaml"
    path.write_text(json.dumps({  # JSON is YAML
        "processors": processors,
        "service": {"pipeline": {
            "receivers": ["http"], "processors": order, "exporters": ["sql"]}},
    }))
    return str(path)


def test_plugin_processor_loads_from_configuration_and_runs(start: Callable[..., Server],
                                                           tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"redact/secrets": {"keys": ["password", "token"]}, "grouping": {},
                   "reopen": {}},
        ["redact/secrets", "grouping", "reopen"])
    server = start(config=config)
    body = error(params={"password": "hunter2", "token": "t0k", "user": "ann"})
    assert server.post("/ingest/errors", body).status_code == 202
    (row,) = server.query("SELECT params FROM error_events")
    params = json.loads(row.params) if isinstance(row.params, str) else row.params
    assert params == {"password": "[redacted]", "token": "[redacted]", "user": "ann"}


def test_a_plugin_that_changes_span_attributes_changes_what_is_stored(
        start: Callable[..., Server], tmp_path: Path) -> None:
    """Span attributes stay unread until a stage reads them; one that changes them
    must find its change in the store, and the attributes it did not touch intact."""
    config = write_config(
        tmp_path, {"redact/secrets": {"keys": ["password"]}, "classify": {},
                   "grouping": {}, "reopen": {}},
        ["redact/secrets", "classify", "grouping", "reopen"])
    server = start(config=config)
    trace_id = random_trace_id()
    span = span_pb(trace_id, "00f067aa0ba902b7")
    span.attributes.extend(attributes_pb({"password": AnyValue(string_value="hunter2"),
                                          "http.route": AnyValue(string_value="/x")}))
    response = post(server, request_of(span).SerializeToString())
    assert response.status_code == 202
    (stored,) = stored_spans(server, trace_id)
    assert stored["attributes"] == {"password": "[redacted]", "http.route": "/x"}


def test_processor_failure_makes_a_batch_500_only_when_every_item_failed(
        start: Callable[..., Server], tmp_path: Path) -> None:
    config = write_config(tmp_path, {"explode": {}, "grouping": {}, "reopen": {}},
                          ["explode", "grouping", "reopen"])
    server = start(config=config)
    response = server.post("/ingest/errors/batch", {"errors": [error(fingerprint="boom-1")]})
    assert response.status_code == 500
    assert "not stored" in response.json()["error"]
    # Invalid items next to it are the client's fault; still the valid one failed.
    assert server.post("/ingest/errors/batch", {"errors": [error(fingerprint="fine")]}
                       ).status_code == 202
    assert [r.fingerprint for r in server.query("SELECT fingerprint FROM error_events")] == ["fine"]
    assert "the explode processor failed on purpose" in server.log()
    server.output.clear()  # the traceback above is the point of this test


def test_an_entry_point_that_is_not_a_processor_is_a_clear_config_error() -> None:
    with pytest.raises(ConfigError, match="not a subclass of model.component.Processor"):
        build_processor("not_a_processor", {})
    with pytest.raises(ConfigError, match="unknown processor type 'nope'"):
        build_processor("nope/x", {})


def test_built_in_processors_come_through_the_same_entry_points() -> None:
    for name in ("classify", "spanmetrics", "grouping", "reopen"):
        assert isinstance(build_processor(name, {}), Processor)


def test_server_refuses_to_start_with_a_bad_plugin(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"not_a_processor": {}}, ["not_a_processor"])
    with pytest.raises(RuntimeError, match="exited with 2") as info:
        start_server(f"sqlite:///{tmp_path / 'db.sqlite'}", config=config)
    assert "configuration error" in str(info.value)
