"""Third-party processors from the entry-point group `sounding.processors`
(tests/plugin_pkg, installed by `make test` like any plugin package)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sounding.component import Processor
from sounding.errors import ConfigError
from sounding.plugins import build_processor
from tests.receiver.test_errors import error
from tests.support.server import Server, start_server


def write_config(tmp_path: Path, processors: dict[str, object], order: list[str]) -> str:
    path = tmp_path / "sounding.yaml"
    path.write_text(json.dumps({  # JSON is YAML
        "processors": processors,
        "service": {"pipelines": {"traces_and_errors": {
            "receivers": ["http"], "processors": order, "exporters": ["sql"]}}},
    }))
    return str(path)


def test_plugin_processor_loads_from_configuration_and_runs(start: Callable[..., Server],
                                                           tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"redact/secrets": {"keys": ["password", "token"]}, "grouping": {}},
        ["redact/secrets", "grouping"])
    server = start(config=config)
    body = error(params={"password": "hunter2", "token": "t0k", "user": "ann"})
    assert server.post("/ingest/errors", body).status_code == 202
    (row,) = server.query("SELECT params FROM error_events")
    params = json.loads(row.params) if isinstance(row.params, str) else row.params
    assert params == {"password": "[redacted]", "token": "[redacted]", "user": "ann"}


def test_processor_failure_makes_a_batch_500_only_when_every_item_failed(
        start: Callable[..., Server], tmp_path: Path) -> None:
    config = write_config(tmp_path, {"explode": {}, "grouping": {}}, ["explode", "grouping"])
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
    with pytest.raises(ConfigError, match="not a subclass of sounding.component.Processor"):
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
