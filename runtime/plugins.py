"""Building a processor or an exporter by name outside a service: what decode
workers (runtime/offload.py) and tests call. The registry itself is
runtime/factory.py; this module only gives it a detached host."""

from __future__ import annotations

from typing import Any, cast

from model.component import Exporter, Extension, Processor
from runtime.factory import GROUPS, DetachedHost, build

PROCESSOR_GROUP = GROUPS["processor"]
EXPORTER_GROUP = GROUPS["exporter"]


def build_processor(name: str, settings: Any) -> Processor:
    return cast(Processor, build("processor", name, settings, DetachedHost()))


def build_exporter(name: str, settings: Any,
                   extensions: dict[str, Extension] | None = None) -> Exporter:
    """An exporter whose host offers only `extensions` (a test's storage extension
    over its store: `{"storage": StorageExtension.over(store)}`)."""
    return cast(Exporter, build("exporter", name, settings, DetachedHost(extensions or {})))
