"""Configuration: a YAML file shaped like an OpenTelemetry Collector's, every
setting overridable by environment, and a working default for all of it."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from model.errors import ConfigError
from runtime import eventloop
from runtime.configcheck import check_keys, nearest, require_int, require_mapping
from runtime.factory import SECTIONS, factory_for, type_of

# `filters` and `scrub` first: errors a project refuses go before anything looks at
# them, and every later stage (the fingerprint above all) sees scrubbed records.
DEFAULT_PROCESSORS = ["filters", "scrub", "classify", "spanmetrics", "exceptions",
                      "logexceptions", "grouping", "reopen"]
# An exporter that stores errors needs the stages that decide their groups and
# reopening, in this order, after every stage that makes errors: without them it
# would store errors with no group, and no resolved group would reopen.
GROUP_STAGES = ("grouping", "reopen")
STORES_ERRORS = ("sql",)
MAKES_ERRORS = ("exceptions", "logexceptions")
# Built-in extensions, built in this order (each may ask those before it) and
# configured by the top-level section of their name.
# `alerts` asks for storage and, like health, is asked by nothing built before it.
BUILTIN_EXTENSIONS = ("storage", "auth", "policy", "dashboard", "alerts", "retention", "crons",
                      "health")
COMPONENT_KINDS = ("receiver", "processor", "exporter")

# The service-level sections. Each component's section (receivers.*, processors.*,
# exporters.*, extensions.*) and each built-in extension's (storage, auth,
# dashboard) gets its defaults from its factory: see `defaults()`.
DEFAULTS: dict[str, Any] = {
    "logging": {
        "level": "info",
        # One log line per request; off by default (see /metrics for counts).
        "access_log": False,
        # A server error that repeats is logged once per kind (exception type and
        # where it was raised) per this many seconds, then as a count
        # (runtime/logthrottle.py): a client cannot flood the log with tracebacks.
        "repeat_seconds": 60,
        # "text" (a line per record) or "json" (one object per line: time, level,
        # logger, message, exception), for every process's log (runtime/logsetup.py).
        "format": "text",
        # Refused requests (401, 400, 413, 415, 503...) are logged at INFO, once per
        # (status, endpoint, reason) per this many seconds, then as a count
        # (receiver/refusals.py); 0 logs none.
        "refused_seconds": 10,
    },
    "service": {
        # The asyncio event loop (runtime/eventloop.py): "auto" is uvloop where it is
        # installed, else the standard one; "uvloop" or "asyncio" to choose.
        "event_loop": "auto",
        # Serve processes (sounding/group.py): "auto" is one per core this process may
        # run on; 1 serves in one process. Above 1, a leader binds the ports and owns the
        # writer, and this many workers serve the ports and hand their batches to that
        # one writer. Only the sql exporter can be shared so ("auto" is then 1 beside
        # any other).
        "workers": "auto",
        # Worker processes that decode and process large trace requests off the event
        # loop (runtime/offload.py): "auto" is one per core beyond the first, at most
        # four; 0 decodes everything on the event loop.
        "decode_workers": "auto",
        # Trace bodies from this size go to a worker; smaller ones are decoded inline.
        "decode_min_bytes": 16 * 1024,
        # Bodies waiting for or inside a worker; past this, ingest answers 503.
        "decode_max_bytes": 8 * 1024 * 1024,
        # Admission control (runtime/admission.py): ingest answers 503 + Retry-After
        # while more requests than this are decoded and waiting for their commit...
        "max_requests_in_flight": 1024,
        # ...or while the event loop turns around later than this (0: not watched).
        # Lower sheds sooner but costs throughput against clients that retry at once.
        "max_event_loop_lag_ms": 100,
        # The one pipeline. Given in a file, it replaces this one whole: a list it
        # leaves out is empty.
        "pipeline": {
            # A receiver whose `enabled` is false is skipped.
            "receivers": ["http", "otlp_grpc", "otlp_http"],
            "processors": list(DEFAULT_PROCESSORS),
            "exporters": ["sql"],
        },
    },
}


def defaults() -> dict[str, Any]:
    """The whole default configuration: the service-level sections above, the
    built-in extensions' sections and the default pipeline's components, each from
    its factory (so every default is written once, beside what it configures)."""
    config = copy.deepcopy(DEFAULTS)
    for type_name in BUILTIN_EXTENSIONS:
        config[type_name] = factory_for("extension", type_name).defaults()
    config["extensions"] = {}
    pipeline = config["service"]["pipeline"]
    for kind in COMPONENT_KINDS:
        config[SECTIONS[kind]] = {name: factory_for(kind, type_of(name)).defaults()
                                  for name in pipeline[SECTIONS[kind]]}
    return config


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
    "SOUNDING_HEALTH_TOKEN": ("health", "token"),
    "SOUNDING_DECODE_WORKERS": ("service", "decode_workers"),
    "SOUNDING_WORKERS": ("service", "workers"),
    "SOUNDING_LOG_LEVEL": ("logging", "level"),
    "SOUNDING_ACCESS_LOG": ("logging", "access_log"),
    "SOUNDING_LOG_FORMAT": ("logging", "format"),
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
    # Secrets and addresses as given: YAML would read some of them as numbers.
    if path[-1] in ("api_keys", "url", "host", "admin_token", "cookie_secret", "secrets_key",
                    "token"):
        return raw
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def load(path: str | os.PathLike[str] | None = None,
         environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Defaults, then the YAML file (SOUNDING_CONFIG or `path`), then the environment."""
    env = os.environ if environ is None else environ
    config = defaults()
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
        # A pipeline given in the file replaces the default one rather than merging.
        service = data.get("service")
        if isinstance(service, dict) and service.get("pipeline") is not None:
            config["service"]["pipeline"] = {}
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


def _component_sections(config: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(kind, name, path, section) of every component the configuration names."""
    found = []
    for kind in (*COMPONENT_KINDS, "extension"):
        section = SECTIONS[kind]
        for name, settings in require_mapping(section, config.get(section)).items():
            found.append((kind, str(name), f"{section}.{name}", settings))
    for type_name in BUILTIN_EXTENSIONS:
        found.append(("extension", type_name, type_name, config.get(type_name)))
    return found


def validate(config: dict[str, Any]) -> None:
    """Refuse an unknown key anywhere, naming it and the nearest known one, then
    have each component's factory fill in its defaults and check its section."""
    known = defaults()
    for key in config:
        if key not in known:
            raise ConfigError(f"unknown key {key}{nearest(str(key), known)}")
    for section in ("receivers", "processors", "exporters", "extensions", "storage",
                    "service", "logging"):
        require_mapping(section, config.get(section))
        config[section] = config.get(section) or {}
    _refuse_pipelines(config["service"])
    for section in ("service", "logging"):
        check_keys(section, config[section], known[section])
    for name in config["extensions"]:
        if type_of(str(name)) in BUILTIN_EXTENSIONS:
            raise ConfigError(f"extensions.{name}: the {type_of(str(name))} extension is "
                              f"configured by the top-level {type_of(str(name))}: section")
    for kind, name, path, settings in _component_sections(config):
        factory = factory_for(kind, type_of(name))
        completed = factory.complete(settings, path)
        factory.validate(path, completed)
        (config[SECTIONS[kind]] if path != name else config)[name] = completed
    _validate_logging(config["logging"])
    _validate_service(config)


def _validate_logging(logging: dict[str, Any]) -> None:
    if str(logging.get("level", "")).upper() not in (
            "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ConfigError("logging.level must be one of debug, info, warning, error, critical")
    repeat = logging.get("repeat_seconds")
    if isinstance(repeat, bool) or not isinstance(repeat, int | float) or repeat <= 0:
        raise ConfigError(f"logging.repeat_seconds must be a number > 0, got {repeat!r}")
    if logging.get("format") not in ("text", "json"):
        raise ConfigError(f"logging.format must be text or json, got {logging.get('format')!r}")
    refused = logging.get("refused_seconds")
    if isinstance(refused, bool) or not isinstance(refused, int | float) or refused < 0:
        raise ConfigError(f"logging.refused_seconds must be a number >= 0, got {refused!r}")


def _refuse_pipelines(service: dict[str, Any]) -> None:
    """`service.pipelines` (named pipelines, of which there had to be exactly one) was
    replaced by `service.pipeline`: an old file is refused with how to rewrite it, not
    read as if it were new (one way to write the pipeline, one place that reads it)."""
    pipelines = service.get("pipelines")
    if pipelines is None:
        return
    names = list(pipelines) if isinstance(pipelines, dict) else []
    inner = f"service.pipelines.{names[0]}" if len(names) == 1 else "service.pipelines.<name>"
    raise ConfigError(
        "service.pipelines is no longer read: the collector runs one pipeline, configured "
        f"as service.pipeline. Move the receivers, processors and exporters of {inner} up "
        "to service.pipeline (service: {pipeline: {receivers: [...], processors: [...], "
        "exporters: [...]}}); an environment variable SOUNDING__SERVICE__PIPELINES__"
        "<NAME>__<KIND> becomes SOUNDING__SERVICE__PIPELINE__<KIND>")


def _validate_service(config: dict[str, Any]) -> None:
    service = config["service"]
    eventloop.loop_factory(service.get("event_loop", "auto"))  # ConfigError if unusable
    if service.get("decode_workers", "auto") != "auto":
        require_int("service", service, "decode_workers", 0)
    if service.get("workers", "auto") != "auto":
        require_int("service", service, "workers", 1)
    require_int("service", service, "decode_min_bytes", 0)
    require_int("service", service, "decode_max_bytes", 1)
    require_int("service", service, "max_requests_in_flight", 1)
    require_int("service", service, "max_event_loop_lag_ms", 0)
    pipeline = require_mapping("service.pipeline", service.get("pipeline"))
    for kind in ("receivers", "processors", "exporters"):
        names = pipeline.get(kind, [])
        if not isinstance(names, list):
            raise ConfigError(f"service.pipeline.{kind} must be a list")
        for name in names:
            if name not in config[kind]:
                raise ConfigError(
                    f"pipeline uses {kind[:-1]} {name!r}, which {kind} does not define"
                    f"{nearest(str(name), config[kind])}")
    if not pipeline.get("exporters"):
        raise ConfigError("the pipeline needs at least one exporter")
    _check_group_stages(pipeline)
    _check_policy_stages(pipeline)
    if service.get("workers", "auto") not in ("auto", 1) and unshared_exporters(pipeline):
        raise ConfigError(
            f"service.workers {service['workers']}: the exporters "
            f"{', '.join(unshared_exporters(pipeline))} cannot be shared by several serve "
            "workers (only sql can); set service.workers to 1")


def unshared_exporters(pipeline: dict[str, Any]) -> list[str]:
    """The pipeline's exporters that a serve group cannot run (sounding/group.py):
    all but sql, whose one writer the group's workers share."""
    return [name for name in pipeline.get("exporters", []) if type_of(name) != "sql"]


def _check_group_stages(pipeline: dict[str, Any]) -> None:
    """Refuse a pipeline that stores errors without GROUP_STAGES in their place."""
    stores = [name for name in pipeline["exporters"] if type_of(str(name)) in STORES_ERRORS]
    if not stores:
        return
    types = [type_of(str(name)) for name in pipeline.get("processors", [])]
    missing = [stage for stage in GROUP_STAGES if stage not in types]
    if missing:
        raise ConfigError(
            f"service.pipeline.processors lacks {' and '.join(map(repr, missing))}: exporter "
            f"{stores[0]!r} stores errors, whose groups and reopening these processors "
            f"decide (add them, in that order, after {' and '.join(MAKES_ERRORS)})")
    last = {t: i for i, t in enumerate(types)}
    first = {t: i for i, t in reversed(list(enumerate(types)))}
    late = [t for t in MAKES_ERRORS if t in last and last[t] > first["grouping"]]
    if late or first["reopen"] < last["grouping"]:
        order = [*(t for t in MAKES_ERRORS if t in types), *GROUP_STAGES]
        raise ConfigError(
            f"service.pipeline.processors must run {', '.join(map(repr, order))} in that order: "
            f"exporter {stores[0]!r} stores errors, which are grouped once made and "
            "reopen once grouped")


def _check_policy_stages(pipeline: dict[str, Any]) -> None:
    """`filters` sees only the doors' errors (before any stage makes errors), and every
    stage after `scrub` sees scrubbed records: `grouping` above all, whose fingerprints
    must not depend on a secret. Refused otherwise, naming the order."""
    types = [type_of(str(name)) for name in pipeline.get("processors", [])]
    first = {t: i for i, t in reversed(list(enumerate(types)))}
    for stage, before in (("filters", (*MAKES_ERRORS, *GROUP_STAGES)),
                          ("scrub", (*MAKES_ERRORS, *GROUP_STAGES))):
        if stage not in first:
            continue
        late = [t for t in before if t in first and first[t] < first[stage]]
        if late:
            raise ConfigError(
                f"service.pipeline.processors runs {late[0]!r} before {stage!r}: {stage} "
                f"must come before {', '.join(repr(t) for t in before)} (the default "
                "pipeline starts with 'filters', 'scrub')")


def env_var_for(path: str) -> str:
    """The environment variable that sets the setting at `path` (receivers.http.port):
    its named alias when it has one, else the generic SOUNDING__ form."""
    parts = tuple(path.split("."))
    for name, alias_path in ENV_ALIASES.items():
        if alias_path == parts:
            return name
    return GENERIC_PREFIX + "__".join(part.upper() for part in parts)


def pipeline_config(config: dict[str, Any]) -> dict[str, list[str]]:
    pipeline = config["service"]["pipeline"] or {}
    return {kind: list(pipeline.get(kind, [])) for kind in ("receivers", "processors", "exporters")}
