"""The registry: every component type, built-in or plugin, comes from the entry
points of its kind; each factory fills in its defaults and checks its section."""

from __future__ import annotations

from pathlib import Path

import pytest

from extensions.storage import StorageExtension
from model.component import Extension, Processor
from model.errors import ConfigError
from runtime.factory import DetachedHost, Factory, build, factory_for, type_names
from storage.store import Store

BUILT_IN = {
    "receiver": {"http", "otlp_http", "otlp_grpc"},
    "processor": {"classify", "spanmetrics", "exceptions", "logexceptions", "grouping",
                  "reopen"},
    "exporter": {"sql"},
    "extension": {"storage", "auth", "health", "dashboard", "alerts"},
}


@pytest.mark.parametrize("kind", sorted(BUILT_IN))
def test_built_ins_of_every_kind_come_through_the_entry_points(kind: str) -> None:
    assert BUILT_IN[kind] <= set(type_names(kind))
    for type_name in BUILT_IN[kind]:
        factory = factory_for(kind, type_name)
        assert isinstance(factory, Factory) and factory.kind == kind
        # Sounding's own components all declare their settings: unknown keys refused.
        assert factory.default_config is not None


def test_a_plugin_class_gets_a_derived_factory_that_passes_its_keys_through() -> None:
    factory = factory_for("processor", "redact")
    assert factory.default_config is None
    redact = build("processor", "redact/x", {"keys": ["a"], "replacement": "-"},
                   DetachedHost())
    assert isinstance(redact, Processor) and redact.config["replacement"] == "-"


def test_a_built_in_section_is_checked_with_its_full_path() -> None:
    with pytest.raises(ConfigError, match=r"unknown key processors\.classify/a\.mode"):
        build("processor", "classify/a", {"mode": 1}, DetachedHost())
    with pytest.raises(ConfigError, match=r"exporters\.sql\.queue_max_bytes must be an "
                                          r"integer >= 1, got 'lots'"):
        build("exporter", "sql", {"queue_max_bytes": "lots"}, DetachedHost())
    with pytest.raises(ConfigError, match=r"receivers\.http must be a mapping"):
        build("receiver", "http", [1], DetachedHost())


def test_defaults_are_filled_in_before_the_component_sees_its_config(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite'}")
    host = DetachedHost({"storage": StorageExtension.over(store)})
    exporter = build("exporter", "sql", {"queue_max_records": 7}, host)
    assert exporter.config["queue_max_records"] == 7
    assert exporter.config["max_commit_records"] == 4_096  # exporters/sql/config.py
    store.dispose()


def test_an_extension_a_component_needs_must_be_there() -> None:
    with pytest.raises(ConfigError, match="the storage extension is needed"):
        build("exporter", "sql", {}, DetachedHost())
    with pytest.raises(ConfigError, match="the auth extension is needed"):
        build("receiver", "http", {}, DetachedHost(pipeline=object()))


def test_an_unknown_type_names_the_nearest_known_one() -> None:
    with pytest.raises(ConfigError, match=r"unknown extension type 'helth'.*did you mean "
                                          r"health\?"):
        factory_for("extension", "helth")


def test_extensions_offer_routes_only_through_their_contract() -> None:
    assert Extension("x").http_routes() == []


def test_a_type_its_defaults_cannot_build_declares_a_sample_that_can() -> None:
    # The test plugin's `collect` exporter needs a path; its class declares a sample.
    factory = factory_for("exporter", "collect")
    with pytest.raises(ConfigError, match="path must name the file"):
        build("exporter", "collect", {}, DetachedHost())
    sample = factory.sample()
    assert sample == {"path": "collected.jsonl"}
    sample["path"] = "changed"  # a copy: the declaration is not changed through it
    assert factory.sample() == {"path": "collected.jsonl"}
    assert build("exporter", "collect", factory.sample(), DetachedHost()).config == {
        "path": "collected.jsonl"}
    # Types their defaults build declare none.
    assert factory_for("exporter", "sql").sample() == {}
