"""The forwarding exporter's configuration (exporters/forward/config.py), checked by
its factory: defaults, routes, and what is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from exporters.forward.config import routes
from exporters.forward.exporter import factory
from model.errors import ConfigError
from sounding import config as config_mod
from tests.support.server import REPO


def completed(**config: Any) -> dict[str, Any]:
    merged = factory.complete(config, "exporters.forward")
    factory.validate("exporters.forward", merged)
    return merged


def test_an_endpoint_reaches_every_signal_of_a_sounding_gateway() -> None:
    assert routes(completed(endpoint="http://gateway:3000/")) == {
        "traces": "http://gateway:3000/ingest/v1/traces",
        "logs": "http://gateway:3000/ingest/v1/logs",
        "errors": "http://gateway:3000/ingest/errors/batch",
        "deploys": "http://gateway:3000/ingest/deploys",
        "requests": "http://gateway:3000/ingest/requests",
        "metrics": "http://gateway:3000/ingest/v1/metrics",
    }


def test_per_signal_urls_and_signals_not_forwarded() -> None:
    config = completed(signals={"traces": "https://otel:4318/v1/traces", "errors": False,
                                "deploys": False, "requests": False, "metrics": False,
                                "logs": "https://otel:4318/v1/logs"})
    assert routes(config) == {"traces": "https://otel:4318/v1/traces",
                              "logs": "https://otel:4318/v1/logs"}


@pytest.mark.parametrize(("config", "message"), [
    ({}, "exporters.forward.endpoint is required to forward"),
    ({"endpoint": "gateway:3000"}, "exporters.forward.endpoint must be an http"),
    ({"endpoint": "http://g", "signals": {"trace": True}}, "did you mean traces?"),
    ({"endpoint": "http://g", "signals": {"traces": 3}}, "must be true, false or a URL"),
    ({"endpoint": "http://g", "queue_max_record": 1}, "did you mean queue_max_records?"),
    ({"endpoint": "http://g", "tls": {"cert_file": "c"}}, "cert_file and key_file"),
    ({"endpoint": "http://g", "tls": {"ca": "c"}}, "unknown key exporters.forward.tls.ca"),
    ({"endpoint": "http://g", "compression": "zstd"}, "gzip or none"),
    ({"endpoint": "http://g", "timeout_seconds": 0}, "timeout_seconds must be an integer"),
])
def test_refused(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("?", r"\?")):
        completed(**config)


def test_the_documented_sidecar_configuration_loads(tmp_path: Path) -> None:
    manual = (REPO / "docs" / "scaling.md").read_text()
    section = manual[manual.index("## Sidecar → gateway"):]
    block = section[section.index("```yaml\n") + 8:section.index("```\n", 8)]
    path = tmp_path / "sidecar.yaml"
    path.write_text(block)
    config = config_mod.load(path, environ={})
    assert config_mod.pipeline_config(config) == {
        "receivers": ["http", "otlp_grpc", "otlp_http"], "processors": [],
        "exporters": ["forward"]}
    assert config["dashboard"]["enabled"] is False
    assert config["exporters"]["forward"]["queue_max_records"] == 1_000_000
    assert routes(config["exporters"]["forward"])["errors"] == (
        "http://gateway:3000/ingest/errors/batch")
