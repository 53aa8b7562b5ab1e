"""The forwarding exporter's configuration (exporters/forward/config.py), checked by
its factory: defaults, routes, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from exporters.forward.config import routes
from exporters.forward.exporter import factory
from sounding.errors import ConfigError


def completed(**config: Any) -> dict[str, Any]:
    merged = factory.complete(config, "exporters.forward")
    factory.validate("exporters.forward", merged)
    return merged


def test_an_endpoint_reaches_every_signal_of_a_sounding_gateway() -> None:
    assert routes(completed(endpoint="http://gateway:3000/")) == {
        "traces": "http://gateway:3000/ingest/v1/traces",
        "errors": "http://gateway:3000/ingest/errors/batch",
        "deploys": "http://gateway:3000/ingest/deploys",
        "requests": "http://gateway:3000/ingest/requests",
    }


def test_per_signal_urls_and_signals_not_forwarded() -> None:
    config = completed(signals={"traces": "https://otel:4318/v1/traces", "errors": False,
                                "deploys": False, "requests": False})
    assert routes(config) == {"traces": "https://otel:4318/v1/traces"}


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
