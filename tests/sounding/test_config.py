"""Configuration: defaults, the YAML file, environment overrides, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sounding import config
from sounding.errors import ConfigError


def test_defaults_need_no_file() -> None:
    loaded = config.load(environ={})
    assert loaded["receivers"]["http"]["port"] == 3000
    assert loaded["storage"]["url"] == "sqlite:///sounding.db"
    assert config.pipeline_config(loaded)["exporters"] == ["sql"]


def test_named_environment_variables_override() -> None:
    loaded = config.load(environ={
        "SOUNDING_DATABASE_URL": "postgresql://u@db/sounding",
        "SOUNDING_HTTP_PORT": "3100",
        "SOUNDING_API_KEYS": "shop:k1,billing:k2",
        "SOUNDING_CORS_ORIGINS": "https://a.example, https://b.example",
    })
    assert loaded["storage"]["url"] == "postgresql://u@db/sounding"
    assert loaded["receivers"]["http"]["port"] == 3100
    assert loaded["auth"]["api_keys"] == "shop:k1,billing:k2"
    assert loaded["receivers"]["http"]["cors_origins"] == ["https://a.example",
                                                           "https://b.example"]


def test_any_setting_has_a_generic_environment_override() -> None:
    loaded = config.load(environ={"SOUNDING__EXPORTERS__SQL__QUEUE_MAX_RECORDS": "500",
                                  "SOUNDING__PROCESSORS__REDACT__KEYS": "[a, b]"})
    assert loaded["exporters"]["sql"]["queue_max_records"] == 500
    assert loaded["processors"]["redact"]["keys"] == ["a", "b"]


def test_file_then_environment(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("receivers:\n  http:\n    port: 3200\nstorage:\n  url: sqlite:///x.db\n")
    loaded = config.load(environ={"SOUNDING_CONFIG": str(path), "SOUNDING_HTTP_PORT": "3300"})
    assert loaded["receivers"]["http"]["port"] == 3300
    assert loaded["storage"]["url"] == "sqlite:///x.db"
    assert loaded["receivers"]["http"]["max_body_bytes"] == 5 * 1024 * 1024  # merged default


@pytest.mark.parametrize(("text", "message"), [
    ("receivers: [1]", "receivers must be a mapping"),
    ("receivers:\n  http:\n    port: high\n", "receivers.http.port must be an integer"),
    ("service:\n  pipelines:\n    a: {receivers: [http], exporters: [nope]}\n",
     "exporter 'nope'"),
    ("service:\n  pipelines: {}\n", "exactly one pipeline"),
    ("storage:\n  url: ''\n", "storage.url"),
    ("storage:\n  sqlite_wal_max_bytes: 4096\n",
     "sqlite_wal_max_bytes must be an integer >= 1048576"),
    ("[unclosed", "not valid YAML"),
    ("logging:\n  repeat_seconds: 0\n", "logging.repeat_seconds must be a number > 0"),
])
def test_bad_configuration_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        config.load(path, environ={})


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read configuration file"):
        config.load(tmp_path / "absent.yaml", environ={})
