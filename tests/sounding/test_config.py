"""Configuration: defaults, the YAML file, environment overrides, clear errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from model.errors import ConfigError
from sounding import config, group


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
    ("service:\n  pipeline: {receivers: [http], exporters: [nope]}\n",
     "exporter 'nope'"),
    ("service:\n  pipeline: {receivers: [http]}\n", "the pipeline needs at least one exporter"),
    ("service:\n  pipeline: [http]\n", "service.pipeline must be a mapping"),
    ("storage:\n  url: ''\n", "storage.url"),
    ("storage:\n  sqlite_wal_max_bytes: 4096\n",
     "sqlite_wal_max_bytes must be an integer >= 1048576"),
    ("[unclosed", "not valid YAML"),
    ("logging:\n  repeat_seconds: 0\n", "logging.repeat_seconds must be a number > 0"),
    ("service:\n  event_loop: tokio\n", "service.event_loop must be one of auto, uvloop, "
     "asyncio, got 'tokio'"),
])
def test_bad_configuration_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        config.load(path, environ={})


def test_a_pipeline_in_the_file_replaces_the_default_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("service:\n  pipeline:\n    processors: [grouping, reopen]\n"
                    "    exporters: [sql]\n")
    assert config.pipeline_config(config.load(path, environ={})) == {
        "receivers": [], "processors": ["grouping", "reopen"], "exporters": ["sql"]}


def test_one_list_of_the_pipeline_can_be_set_from_the_environment() -> None:
    loaded = config.load(environ={"SOUNDING__SERVICE__PIPELINE__RECEIVERS": "[http]"})
    assert config.pipeline_config(loaded) == {
        "receivers": ["http"], "processors": config.DEFAULT_PROCESSORS, "exporters": ["sql"]}


@pytest.mark.parametrize(("text", "environ", "named"), [
    ("service:\n  pipelines:\n    default: {receivers: [http], exporters: [sql]}\n", {},
     "service.pipelines.default"),
    ("service:\n  pipelines: {a: {exporters: [sql]}, b: {exporters: [sql]}}\n", {},
     "service.pipelines.<name>"),
    ("", {"SOUNDING__SERVICE__PIPELINES__DEFAULT__EXPORTERS": "[sql]"},
     "service.pipelines.default"),
])
def test_the_old_pipelines_mapping_is_refused_saying_how_to_rewrite_it(
        tmp_path: Path, text: str, environ: dict[str, str], named: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        config.load(path, environ=environ)
    message = str(raised.value)
    assert message.startswith("service.pipelines is no longer read")
    assert f"Move the receivers, processors and exporters of {named} up to service.pipeline" \
        in message
    assert "SOUNDING__SERVICE__PIPELINE__<KIND>" in message


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read configuration file"):
        config.load(tmp_path / "absent.yaml", environ={})


@pytest.mark.parametrize(("text", "message"), [
    ("recievers:\n  http: {}\n", "unknown key recievers (did you mean receivers?)"),
    ("receivers:\n  http:\n    prot: 1\n", "unknown key receivers.http.prot (did you mean port?)"),
    ("receivers:\n  otlp_grpc:\n    max_mesage_bytes: 1\n",
     "unknown key receivers.otlp_grpc.max_mesage_bytes (did you mean max_message_bytes?)"),
    ("exporters:\n  sql:\n    queue_max_record: 1\n",
     "unknown key exporters.sql.queue_max_record (did you mean queue_max_records?)"),
    ("processors:\n  classify:\n    mode: x\n", "unknown key processors.classify.mode"),
    ("service:\n  decode_worker: 2\n",
     "unknown key service.decode_worker (did you mean decode_workers?)"),
    ("service:\n  pipeline: {receivers: [http], exporters: [sql], processor: []}\n",
     "unknown key service.pipeline.processor (did you mean processors?)"),
    ("storage:\n  ulr: sqlite:///x.db\n", "unknown key storage.ulr (did you mean url?)"),
    ("auth:\n  api_key: a:b\n", "unknown key auth.api_key (did you mean api_keys?)"),
    ("logging:\n  levle: debug\n", "unknown key logging.levle (did you mean level?)"),
    ("dashboard:\n  enabeld: false\n", "unknown key dashboard.enabeld (did you mean enabled?)"),
    ("receivers:\n  htp: {}\n", "unknown receiver type 'htp': no built-in and no entry point "
     "in group sounding.receivers (did you mean http?)"),
    ("extensions:\n  storage: {}\n", "configured by the top-level storage: section"),
])
def test_an_unknown_key_anywhere_is_refused_naming_the_nearest(
        tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        config.load(path, environ={})


def test_an_unknown_key_from_the_environment_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"unknown key exporters\.sql\.queue_max"):
        config.load(environ={"SOUNDING__EXPORTERS__SQL__QUEUE_MAX": "5"})
    with pytest.raises(ConfigError, match="unknown key nope"):
        config.load(environ={"SOUNDING__NOPE": "1"})


def test_each_component_section_gets_its_factory_defaults(tmp_path: Path) -> None:
    """Defaults are written once, beside the component: a second HTTP receiver named
    `otlp_http/b` gets otlp_http's, the built-in extensions theirs."""
    from receiver.http.server import OTLP_HTTP_DEFAULTS

    path = tmp_path / "c.yaml"
    path.write_text("receivers:\n  otlp_http/b:\n    port: 4400\n")
    loaded = config.load(path, environ={})
    assert loaded["receivers"]["otlp_http/b"] == {**OTLP_HTTP_DEFAULTS, "port": 4400}
    assert loaded["dashboard"]["enabled"] is True and loaded["dashboard"]["port"] is None
    assert loaded["auth"]["cache_seconds"] == 10
    assert loaded["exporters"]["sql"]["queue_max_records"] == 12_288


def test_a_plugin_class_that_declares_no_config_takes_any_key() -> None:
    """tests/plugin_pkg's processors predate factories and declare no default_config:
    their keys are theirs to read."""
    loaded = config.load(environ={"SOUNDING__PROCESSORS__EXPLODE__ANYTHING": "1"})
    assert loaded["processors"]["explode"] == {"anything": 1}


def test_the_alerts_secrets_key_from_the_environment_is_taken_as_written() -> None:
    digits = "1234567890" * 4  # YAML would read it as a number
    loaded = config.load(environ={"SOUNDING__ALERTS__SECRETS_KEY": digits})
    assert loaded["alerts"]["secrets_key"] == digits
    with pytest.raises(ConfigError, match="alerts.secrets_key must be a string of at least 32"
                       ) as refused:
        config.load(environ={"SOUNDING__ALERTS__SECRETS_KEY": "too-short-key"})
    assert "too-short-key" not in str(refused.value)


def _pipeline(processors: list[str], exporters: str = "[sql]") -> str:
    return (f"service:\n  pipeline: {{receivers: [http], "
            f"processors: [{', '.join(processors)}], exporters: {exporters}}}\n")


@pytest.mark.parametrize(("processors", "message"), [
    ([], "service.pipeline.processors lacks 'grouping' and 'reopen': exporter 'sql' "
         "stores errors"),
    (["exceptions", "grouping"], "service.pipeline.processors lacks 'reopen'"),
    (["reopen"], "lacks 'grouping': exporter 'sql'"),
    (["grouping", "exceptions", "reopen"],
     "must run 'exceptions', 'grouping', 'reopen' in that order"),
    (["exceptions", "reopen", "grouping"],
     "must run 'exceptions', 'grouping', 'reopen' in that order"),
])
def test_a_pipeline_that_stores_errors_without_grouping_them_is_refused(
        tmp_path: Path, processors: list[str], message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(_pipeline(processors))
    with pytest.raises(ConfigError, match=re.escape(message)):
        config.load(path, environ={})


@pytest.mark.parametrize(("processors", "exporters"), [
    (["exceptions", "logexceptions", "grouping", "reopen"], "[sql]"),
    (["grouping", "reopen"], "[sql]"),
    ([], "[forward]"),  # a sidecar: the gateway groups what it receives
    (["classify"], "[forward]"),
])
def test_a_pipeline_that_groups_what_it_stores_or_stores_nothing_is_taken(
        tmp_path: Path, processors: list[str], exporters: str) -> None:
    path = tmp_path / "c.yaml"
    forward = "exporters:\n  forward: {endpoint: 'http://gateway:3000'}\n"
    path.write_text(_pipeline(processors, exporters) + (forward if "forward" in exporters
                                                         else ""))
    assert config.pipeline_config(config.load(path, environ={}))["processors"] == processors


def test_serve_workers_share_only_the_sql_writer(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    sidecar = ("exporters:\n  forward: {endpoint: 'http://gateway:3000'}\n"
               "service:\n  pipeline: {receivers: [http], exporters: [forward]}\n")
    path.write_text(sidecar + "  workers: 2\n")
    with pytest.raises(ConfigError, match="exporters forward cannot be shared"):
        config.load(path, environ={})
    path.write_text(sidecar + "  workers: auto\n")
    assert group.workers_of(config.load(path, environ={})) == 1
    path.write_text(sidecar)  # the default, auto: one process beside forward
    assert group.workers_of(config.load(path, environ={})) == 1
    cores = len(os.sched_getaffinity(0))
    assert group.workers_of(config.load(None, environ={"SOUNDING_WORKERS": "auto"})) == cores
    # With nothing set, one serve worker per core this process may run on.
    assert group.workers_of(config.load(None, environ={})) == cores
    with pytest.raises(ConfigError, match="service.workers must be an integer >= 1"):
        config.load(None, environ={"SOUNDING_WORKERS": "0"})


@pytest.mark.parametrize(("processors", "message"), [
    (["exceptions", "scrub", "grouping", "reopen"],
     "runs 'exceptions' before 'scrub': scrub must come before"),
    (["grouping", "scrub", "reopen"], "runs 'grouping' before 'scrub'"),
    (["scrub", "logexceptions", "filters", "grouping", "reopen"],
     "runs 'logexceptions' before 'filters'"),
])
def test_filters_and_scrub_after_the_stages_they_must_precede_are_refused(
        tmp_path: Path, processors: list[str], message: str) -> None:
    """Fingerprints are computed on scrubbed text, and filters see the doors' errors only."""
    path = tmp_path / "c.yaml"
    path.write_text(_pipeline(processors))
    with pytest.raises(ConfigError, match=re.escape(message)):
        config.load(path, environ={})


@pytest.mark.parametrize(("yaml_text", "message"), [
    ("policy: {scrubbing: {rules: [{keys: [a], action: shred}]}}",
     "policy.scrubbing.rules[0].action must be one of mask, hash, remove"),
    ("policy: {filters: {ip_ranges: [10.0.0.300/8]}}",
     "policy.filters.ip_ranges: '10.0.0.300/8' is not a CIDR block"),
    ("policy: {projects: {shop: {filters: {releases: [1]}}}}",
     "policy.projects.shop.filters.releases must be a list of non-empty strings"),
    ("policy: {projects: {shop: {scrub: {}}}}", "policy.projects.shop.scrub is not a setting"),
    ("policy: {refresh_seconds: 0}", "policy.refresh_seconds must be a number > 0"),
])
def test_a_bad_policy_is_refused_naming_the_key(tmp_path: Path, yaml_text: str,
                                               message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml_text + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        config.load(path, environ={})
