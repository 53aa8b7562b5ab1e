"""Building stages by name: built-ins and plugins from entry points.

Processor types come from the entry-point group `sounding.processors` (Sounding's
own are registered there too, in pyproject.toml); exporter types from
`sounding.exporters`. A stage named `type/label` in the configuration is built
from `type`, so one type can appear twice with different settings.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any, TypeVar

from sounding.component import Component, Exporter, Processor
from sounding.errors import ConfigError

PROCESSOR_GROUP = "sounding.processors"
EXPORTER_GROUP = "sounding.exporters"

T = TypeVar("T", bound=Component)


def _builtin_exporters() -> dict[str, type[Exporter]]:
    from exporters.sql import SqlExporter

    return {"sql": SqlExporter}


def _find(group: str, type_name: str) -> Any:
    matches = entry_points(group=group, name=type_name)
    if not matches:
        return None
    (entry,) = list(matches)[:1]
    try:
        return entry.load()
    except Exception as exc:  # a plugin that fails to import is a configuration error
        raise ConfigError(f"{group} plugin {type_name!r} ({entry.value}) failed to load: {exc}") \
            from exc


def _build(group: str, base: type[T], name: str, settings: Any, builtins: dict[str, Any],
           **extra: Any) -> T:
    type_name = name.split("/", 1)[0]
    cls = builtins.get(type_name) or _find(group, type_name)
    if cls is None:
        raise ConfigError(f"unknown {base.__name__.lower()} type {type_name!r}: no built-in and "
                          f"no entry point in group {group}")
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ConfigError(f"{group} entry {type_name!r} is {cls!r}, not a subclass of "
                          f"{base.__module__}.{base.__name__}")
    if settings is not None and not isinstance(settings, dict):
        raise ConfigError(f"settings of {name!r} must be a mapping")
    try:
        return cls(name, settings or {}, **extra)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"cannot build {name!r}: {exc}") from exc


def build_processor(name: str, settings: Any) -> Processor:
    return _build(PROCESSOR_GROUP, Processor, name, settings, {})  # type: ignore[type-abstract]


def build_exporter(name: str, settings: Any, **extra: Any) -> Exporter:
    return _build(EXPORTER_GROUP, Exporter, name, settings,  # type: ignore[type-abstract]
                  _builtin_exporters(), **extra)
