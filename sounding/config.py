"""Configuration: a YAML file shaped like an OpenTelemetry Collector's, every
setting overridable by environment, and a working default for all of it."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from sounding.errors import ConfigError

DEFAULT_PROCESSORS = ["classify", "spanmetrics", "exceptions", "grouping", "reopen"]

DEFAULTS: dict[str, Any] = {
    "receivers": {
        # The HTTP receiver of the ingestion contract: /ingest/*, /health.
        "http": {
            "host": "0.0.0.0",
            "port": 3000,
            "max_body_bytes": 5 * 1024 * 1024,
            # Bytes held by every body being read (raw or inflated) at once, and open
            # connections; past either, 503 + Retry-After (receiver/body.py,
            # receiver/connections.py).
            "max_inflight_body_bytes": 64 * 1024 * 1024,
            "max_connections": 512,
            "cors_origins": [],
            # Several `sounding serve` processes may share the port (SO_REUSEPORT).
            "reuse_port": False,
            # True only behind a TLS-terminating proxy that every request goes through:
            # its X-Forwarded-Proto/-For are then trusted (dashboard cookies get Secure).
            "xheaders": False,
        },
        # OTLP over gRPC for SDKs and Collectors left at their defaults (TraceService
        # and Sounding's own services, proto/sounding/v1). Set `enabled: false` to
        # free the port.
        "otlp_grpc": {
            "enabled": True,
            "host": "0.0.0.0",
            "port": 4317,
            "max_message_bytes": 5 * 1024 * 1024,
        },
        # The standard OTLP/HTTP port, serving /v1/traces (also on :3000 under /ingest).
        "otlp_http": {
            "enabled": False,
            "host": "0.0.0.0",
            "port": 4318,
            "max_body_bytes": 5 * 1024 * 1024,
            "max_inflight_body_bytes": 64 * 1024 * 1024,
            "max_connections": 512,
            "cors_origins": [],
        },
    },
    "processors": {name: {} for name in DEFAULT_PROCESSORS},
    "exporters": {
        "sql": {
            # Bounds of what is handed to the writer and not yet committed; past them
            # ingest answers 503. They bound memory: a queued span costs about 3 KiB.
            "queue_max_records": 12_288,
            "queue_max_bytes": 32 * 1024 * 1024,
            # The most records one group commit writes in one transaction.
            "max_commit_records": 4_096,
            "retry_after_seconds": 1,
            # SQLite only: the writer's page cache; a warm cache keeps index inserts cheap.
            "sqlite_cache_kib": 8 * 1024,
        },
    },
    "storage": {
        "url": "sqlite:///sounding.db",
        # SQLite only: NORMAL survives a crash of the process (kill -9); FULL also
        # survives a power cut, at the cost of an fsync per commit.
        "sqlite_synchronous": "NORMAL",
        # SQLite only: past this size the write-ahead log is emptied, holding the
        # writer for the end of that checkpoint (two fsyncs); 0 lets it grow. 256 MiB
        # keeps the file within a few hundred MB and, at 110 MB/s of log, holds the
        # writer at most once every two seconds or so.
        "sqlite_wal_max_bytes": 256 * 1024 * 1024,
    },
    "auth": {
        # Comma-separated project:key pairs, seeded at start (for sidecars and tests).
        "api_keys": "",
        # How long a key lookup is cached; also the longest a revoked key still works.
        "cache_seconds": 10,
    },
    "logging": {
        "level": "info",
        # One log line per request; off by default (see /metrics for counts).
        "access_log": False,
        # A server error that repeats is logged once per kind (exception type and
        # where it was raised) per this many seconds, then as a count
        # (sounding/logthrottle.py): a client cannot flood the log with tracebacks.
        "repeat_seconds": 60,
    },
    "dashboard": {
        # The dashboard and its read API, served by the HTTP receiver.
        "enabled": True,
        # The admin token that logs in; when unset, one is generated on first run,
        # printed once and kept only as a hash in the database.
        "admin_token": None,
        # The key that signs session cookies; when unset, one is generated and kept in
        # the database, shared by every collector using it.
        "cookie_secret": None,
        "session_days": 7,
    },
    "service": {
        # Worker processes that decode and process large trace requests off the event
        # loop (sounding/offload.py): "auto" is one per core beyond the first, at most
        # four; 0 decodes everything on the event loop.
        "decode_workers": "auto",
        # Trace bodies from this size go to a worker; smaller ones are decoded inline.
        "decode_min_bytes": 16 * 1024,
        # Bodies waiting for or inside a worker; past this, ingest answers 503.
        "decode_max_bytes": 8 * 1024 * 1024,
        # Admission control (sounding/admission.py): ingest answers 503 + Retry-After
        # while more requests than this are decoded and waiting for their commit...
        "max_requests_in_flight": 1024,
        # ...or while the event loop turns around later than this (0: not watched).
        # Lower sheds sooner but costs throughput against clients that retry at once.
        "max_event_loop_lag_ms": 100,
        "pipelines": {
            "default": {
                # A receiver whose `enabled` is false is skipped.
                "receivers": ["http", "otlp_grpc", "otlp_http"],
                "processors": list(DEFAULT_PROCESSORS),
                "exporters": ["sql"],
            },
        },
    },
}

# Named environment variables for the settings people change most.
ENV_ALIASES: dict[str, tuple[str, ...]] = {
    "SOUNDING_DATABASE_URL": ("storage", "url"),
    "SOUNDING_HTTP_HOST": ("receivers", "http", "host"),
    "SOUNDING_HTTP_PORT": ("receivers", "http", "port"),
    "SOUNDING_MAX_BODY_BYTES": ("receivers", "http", "max_body_bytes"),
    "SOUNDING_CORS_ORIGINS": ("receivers", "http", "cors_origins"),
    "SOUNDING_GRPC_PORT": ("receivers", "otlp_grpc", "port"),
    "SOUNDING_OTLP_HTTP_PORT": ("receivers", "otlp_http", "port"),
    "SOUNDING_API_KEYS": ("auth", "api_keys"),
    "SOUNDING_SQLITE_SYNCHRONOUS": ("storage", "sqlite_synchronous"),
    "SOUNDING_ADMIN_TOKEN": ("dashboard", "admin_token"),
    "SOUNDING_DECODE_WORKERS": ("service", "decode_workers"),
    "SOUNDING_LOG_LEVEL": ("logging", "level"),
    "SOUNDING_ACCESS_LOG": ("logging", "access_log"),
}
# Any setting: SOUNDING__RECEIVERS__HTTP__PORT=3001 (path lowercased, value read as YAML).
GENERIC_PREFIX = "SOUNDING__"


def deep_merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _set_path(config: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = config
    for key in path[:-1]:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"cannot set {'.'.join(path)}: {key} is not a mapping")
        node = child
    node[path[-1]] = value


def _env_value(path: tuple[str, ...], raw: str) -> Any:
    if path[-1] == "cors_origins":
        return [origin.strip() for origin in raw.split(",") if origin.strip()]
    if path[-1] in ("api_keys", "url", "host", "admin_token", "cookie_secret"):
        return raw
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def load(path: str | os.PathLike[str] | None = None,
         environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Defaults, then the YAML file (SOUNDING_CONFIG or `path`), then the environment."""
    env = os.environ if environ is None else environ
    config = copy.deepcopy(DEFAULTS)
    file_path = path or env.get("SOUNDING_CONFIG")
    if file_path:
        try:
            text = Path(file_path).read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read configuration file {file_path}: {exc}") from exc
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"configuration file {file_path} is not valid YAML: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"configuration file {file_path} must hold a mapping")
        # A pipeline list given in the file replaces the default one rather than merging.
        pipelines = data.get("service", {}).get("pipelines") if isinstance(
            data.get("service"), dict) else None
        if pipelines is not None:
            config["service"]["pipelines"] = {}
        deep_merge(config, data)
    for name, alias_path in ENV_ALIASES.items():
        if name in env:
            _set_path(config, alias_path, _env_value(alias_path, env[name]))
    for name, raw in env.items():
        if name.startswith(GENERIC_PREFIX) and len(name) > len(GENERIC_PREFIX):
            generic_path = tuple(part.lower() for part in name[len(GENERIC_PREFIX):].split("__"))
            _set_path(config, generic_path, _env_value(generic_path, raw))
    validate(config)
    return config


def _require_int(config: dict[str, Any], path: tuple[str, ...], minimum: int = 0) -> None:
    node: Any = config
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    if node is None:
        return
    if isinstance(node, bool) or not isinstance(node, int) or node < minimum:
        raise ConfigError(f"{'.'.join(path)} must be an integer >= {minimum}, got {node!r}")


def validate(config: dict[str, Any]) -> None:
    for section in ("receivers", "processors", "exporters", "storage", "service"):
        if not isinstance(config.get(section), dict):
            raise ConfigError(f"{section} must be a mapping")
    for name, receiver in config["receivers"].items():
        if not isinstance(receiver, dict):
            raise ConfigError(f"receivers.{name} must be a mapping")
        _require_int(config, ("receivers", name, "port"), 0)
        _require_int(config, ("receivers", name, "max_body_bytes"), 1)
        _require_int(config, ("receivers", name, "max_message_bytes"), 1)
        _require_int(config, ("receivers", name, "max_inflight_body_bytes"), 1)
        _require_int(config, ("receivers", name, "max_connections"), 1)
        for flag in ("enabled", "xheaders"):
            if not isinstance(receiver.get(flag, flag == "enabled"), bool):
                raise ConfigError(f"receivers.{name}.{flag} must be true or false")
    for key in ("queue_max_records", "queue_max_bytes", "max_commit_records",
                "sqlite_cache_kib"):
        _require_int(config, ("exporters", "sql", key), 1)
    if str(config["logging"].get("level", "")).upper() not in (
            "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ConfigError("logging.level must be one of debug, info, warning, error, critical")
    repeat = config["logging"].get("repeat_seconds")
    if isinstance(repeat, bool) or not isinstance(repeat, int | float) or repeat <= 0:
        raise ConfigError(f"logging.repeat_seconds must be a number > 0, got {repeat!r}")
    _validate_dashboard(config.get("dashboard"))
    if not isinstance(config["storage"].get("url"), str) or not config["storage"]["url"]:
        raise ConfigError("storage.url must be a database URL")
    wal_max = config["storage"].get("sqlite_wal_max_bytes", 0)
    # Below a mebibyte the writer would be held several times a second for nothing.
    if wal_max != 0:
        _require_int(config, ("storage", "sqlite_wal_max_bytes"), 1024 * 1024)
    if config["service"].get("decode_workers", "auto") != "auto":
        _require_int(config, ("service", "decode_workers"), 0)
    _require_int(config, ("service", "decode_min_bytes"), 0)
    _require_int(config, ("service", "decode_max_bytes"), 1)
    _require_int(config, ("service", "max_requests_in_flight"), 1)
    _require_int(config, ("service", "max_event_loop_lag_ms"), 0)
    pipelines = config["service"].get("pipelines")
    if not isinstance(pipelines, dict) or len(pipelines) != 1:
        raise ConfigError("service.pipelines must define exactly one pipeline")
    (pipeline,) = pipelines.values()
    for kind in ("receivers", "processors", "exporters"):
        names = pipeline.get(kind, [])
        if not isinstance(names, list):
            raise ConfigError(f"service.pipelines.*.{kind} must be a list")
        for name in names:
            if name not in config[kind]:
                raise ConfigError(
                    f"pipeline uses {kind[:-1]} {name!r}, which {kind} does not define")
    if not pipeline.get("exporters"):
        raise ConfigError("the pipeline needs at least one exporter")


def _validate_dashboard(dashboard: Any) -> None:
    if not isinstance(dashboard, dict):
        raise ConfigError("dashboard must be a mapping")
    for key in ("admin_token", "cookie_secret"):
        value = dashboard.get(key)
        # A guessable token would open every project's data: insist on some length.
        if value is not None and (not isinstance(value, str) or len(value) < 16):
            raise ConfigError(f"dashboard.{key} must be a string of at least 16 characters")
    if not isinstance(dashboard.get("enabled", True), bool):
        raise ConfigError("dashboard.enabled must be true or false")
    _require_int({"dashboard": dashboard}, ("dashboard", "session_days"), 1)


def pipeline_config(config: dict[str, Any]) -> dict[str, list[str]]:
    (pipeline,) = config["service"]["pipelines"].values()
    return {kind: list(pipeline.get(kind, [])) for kind in ("receivers", "processors", "exporters")}
