"""Factories and their registry: every receiver, processor, exporter and extension
type, built-in or plugin, enters through an entry point.

The groups are `sounding.receivers`, `sounding.processors`, `sounding.exporters`
and `sounding.extensions` (Sounding's own are registered in pyproject.toml). An
entry point names a `Factory`, or a Component subclass whose factory is derived:
its class attribute `default_config` (when it declares one, unknown keys in its
section are refused; when it declares none, as the plugins written before
factories existed, any key is passed through) and an optional classmethod
`validate_config(path, config)`. A stage named `type/label` is built from `type`,
so one type can appear twice with different settings.

A type that its defaults cannot build (an exporter that needs an endpoint or a
path) declares a `sample_config`: what the lifecycle test over every registered
type (tests/sounding/test_lifecycle.py) builds it with, instead of skipping it.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoints, entry_points
from typing import Any

from model.component import Component, Exporter, Extension, Host, Processor, Receiver
from model.errors import ConfigError
from runtime.configcheck import check_keys, nearest, require_mapping

KINDS = ("receiver", "processor", "exporter", "extension")
GROUPS = {kind: f"sounding.{kind}s" for kind in KINDS}
# The configuration section each kind's components are named in.
SECTIONS = {kind: f"{kind}s" for kind in KINDS}
BASES: dict[str, type[Component]] = {
    "receiver": Receiver, "processor": Processor, "exporter": Exporter, "extension": Extension}

Create = Callable[[str, dict[str, Any], Host], Component]
Check = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Factory:
    """Builds one type of component. `default_config` None accepts any keys.
    `sample_config`: settings merged over the defaults that build a working component
    when the defaults alone cannot (a required endpoint, say); None when they can."""

    type_name: str
    kind: str
    create_component: Create
    default_config: Mapping[str, Any] | None = None
    check: Check | None = None
    sample_config: Mapping[str, Any] | None = None

    def sample(self) -> dict[str, Any]:
        """A configuration this factory can build a component from, unvalidated:
        `sample_config` if declared, else nothing over the defaults."""
        return copy.deepcopy(dict(self.sample_config or {}))

    def defaults(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.default_config or {}))

    def complete(self, config: Any, path: str) -> dict[str, Any]:
        """The defaults with `config` merged over them (one level of mappings deep)."""
        given = require_mapping(path, config)
        merged = self.defaults()
        for key, value in given.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        return merged

    def validate(self, path: str, config: dict[str, Any]) -> None:
        """ConfigError naming the full key path (`receivers.http.port`)."""
        require_mapping(path, config)
        if self.default_config is not None:
            check_keys(path, config, self.default_config)
        if self.check is not None:
            self.check(path, config)

    def create(self, name: str, config: dict[str, Any], host: Host) -> Component:
        return self.create_component(name, config, host)


def _derived(type_name: str, kind: str, cls: type[Component]) -> Factory:
    check = getattr(cls, "validate_config", None)
    # A class that needs what the host holds builds itself from it (`from_host`).
    from_host = getattr(cls, "from_host", None)
    create = from_host if from_host is not None else (
        lambda name, config, _host: cls(name, config))
    return Factory(type_name, kind, create,
                   getattr(cls, "default_config", None), check,
                   getattr(cls, "sample_config", None))


@functools.cache
def _entries(group: str) -> EntryPoints:
    """A group's entry points, read once per process: each reading scans the metadata
    of every installed distribution, and start-up asks for fifteen types."""
    return entry_points(group=group)


def type_names(kind: str) -> list[str]:
    return sorted({entry.name for entry in _entries(GROUPS[kind])})


@functools.cache
def factory_for(kind: str, type_name: str) -> Factory:
    group, base = GROUPS[kind], BASES[kind]
    matches = list(_entries(group).select(name=type_name))
    if not matches:
        raise ConfigError(f"unknown {kind} type {type_name!r}: no built-in and no entry point "
                          f"in group {group}{nearest(type_name, type_names(kind))}")
    entry = matches[0]
    try:
        loaded = entry.load()
    except Exception as exc:  # a plugin that fails to import is a configuration error
        raise ConfigError(f"{group} plugin {type_name!r} ({entry.value}) failed to load: {exc}"
                          ) from exc
    if isinstance(loaded, Factory):
        if loaded.kind != kind:
            raise ConfigError(f"{group} entry {type_name!r} is a {loaded.kind} factory, "
                              f"not a {kind} one")
        return loaded
    if isinstance(loaded, type) and issubclass(loaded, base):
        return _derived(type_name, kind, loaded)
    raise ConfigError(f"{group} entry {type_name!r} is {loaded!r}, not a subclass of "
                      f"{base.__module__}.{base.__name__}")


def type_of(name: str) -> str:
    return name.split("/", 1)[0]


def build(kind: str, name: str, config: Any, host: Host, path: str | None = None
          ) -> Component:
    """The component `name` of `kind`, built from its factory with its defaults
    filled in and its section validated."""
    path = path or f"{SECTIONS[kind]}.{name}"
    factory = factory_for(kind, type_of(name))
    merged = factory.complete(config, path)
    factory.validate(path, merged)
    try:
        component = factory.create(name, merged, host)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"cannot build {name!r}: {exc}") from exc
    base = BASES[kind]
    if not isinstance(component, base):
        raise ConfigError(f"the {kind} factory {factory.type_name!r} built {component!r}, "
                          f"not a {base.__module__}.{base.__name__}")
    return component


class DetachedHost(Host):
    """The host of a component built outside a service: processors in a decode
    worker (runtime/offload.py), and tests. It holds only what it is given."""

    def __init__(self, extensions: dict[str, Extension] | None = None,
                 pipeline: Any = None) -> None:
        self._extensions = dict(extensions or {})
        self._pipeline = pipeline

    @property
    def pipeline(self) -> Any:
        if self._pipeline is None:
            raise ConfigError("this component needs a pipeline; it is built outside a service")
        return self._pipeline

    def extension(self, type_name: str, contract: type[Any]) -> Any:
        return checked_extension(self._extensions, type_name, contract)

    def components(self) -> list[Component]:
        return list(self._extensions.values())


def checked_extension(extensions: Mapping[str, Extension], type_name: str,
                      contract: type[Any]) -> Any:
    extension = extensions.get(type_name)
    if extension is None:
        raise ConfigError(f"the {type_name} extension is needed but not configured "
                          "(or disabled)")
    if not isinstance(extension, contract):
        raise ConfigError(f"the {type_name} extension {extension!r} is not a "
                          f"{contract.__name__}")
    return extension
